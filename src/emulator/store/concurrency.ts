/** Files the store reads or writes at once: enough to keep the disk busy, far below any fd limit. */
export const FILES_IN_FLIGHT = 32;

/**
 * Maps items through `fn` with at most `limit` calls in flight; the results keep the items' order.
 * After a failure no further call starts, and the first error is thrown only once the calls in
 * flight have settled, so nothing is still writing behind the caller's back when it sees the error.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  const failures: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (failures.length === 0 && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failures.length > 0) throw failures[0];
  return results;
}
