/**
 * How deep JSON may nest: every walk over user JSON (the emulator's, and the sandbox's own
 * JSON.stringify of what user code returns) stays far from the stack's end below it.
 */
export const MAX_DEPTH = 64;

/**
 * Whether `value` nests objects or arrays deeper than `max` (checked without recursion). Run on
 * every JSON body: two parallel stacks and `for...in` (JSON values own all their keys) keep a
 * 3.5 MB body to about 6 ms, where a stack of [node, depth] pairs took 30.
 */
export function exceedsDepth(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [0];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth >= max) return true;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in node) {
        const child = node[key];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}
