/**
 * JSON text with every object's members sorted by name: two values equal but for the order of their
 * members give the same text (undefined for undefined, as JSON.stringify). Integer-like names still
 * come first, as JSON.stringify writes them.
 */
export function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
