/**
 * The field names of `req.svc` as the platform's injected client (the vendor's JS SDK) has them:
 * what the code sends is snake_cased (`expiresAt` -> `expires_at`; snake_case passes as it is), what
 * comes back of a token camelCased (`created_at` -> `createdAt`), deep, but for a token's `data` and
 * `metadata`, which are the user's and kept as given both ways. Pure; in the sandbox process.
 */

const UPPER = /[A-Z]/;

/** The members whose keys are the user's own, never renamed. */
const KEPT = new Set(['data', 'metadata']);

/** `expiresAt` -> `expires_at`, `searchIndexes` -> `search_indexes`, `URLPath` -> `url_path`; snake_case as it is. */
export function snakeKey(key: string): string {
  if (!UPPER.test(key)) return key;
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** `created_at` -> `createdAt`, `page_number` -> `pageNumber`; camelCase as it is. */
export function camelKey(key: string): string {
  if (!key.includes('_') && !key.includes('-')) return key;
  return key.replace(/[_-]+([a-zA-Z0-9])/g, (_, next: string) => next.toUpperCase());
}

/** Every key of `value` renamed by `rename`, deep (arrays' items too). */
function renamed(value: unknown, rename: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => renamed(item, rename));
  if (typeof value !== 'object' || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) defineKey(result, rename(key), renamed(item, rename));
  return result;
}

/** A token-like object's keys renamed, its `data` and `metadata` kept as they are. */
function tokenRenamed(value: unknown, rename: (key: string) => string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    defineKey(result, KEPT.has(key) ? key : rename(key), KEPT.has(key) ? item : renamed(item, rename));
  return result;
}

/** A key set as an own member whatever it is (`__proto__` too: JSON has such keys). */
function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A token (tokens.create's body) or a list query as the client sends it: snake_case. */
export function tokenRequest(value: unknown): unknown {
  return tokenRenamed(value, snakeKey);
}

/** A token, or a page of them, as the client returns it: camelCase, `data` and `metadata` as stored. */
export function tokenResponse(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const page = value as { data?: unknown; pagination?: unknown };
  if (Array.isArray(page.data) && page.pagination !== undefined) {
    return {
      data: page.data.map((token) => tokenRenamed(token, camelKey)),
      pagination: renamed(page.pagination, camelKey),
    };
  }
  return tokenRenamed(value, camelKey);
}
