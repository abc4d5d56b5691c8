import { isMap, isSeq, isScalar, type Document, type LineCounter, type Node, type Pair } from 'yaml';

export type YamlPath = readonly (string | number)[];

/**
 * Where things are in svc.yaml: the line and column of the value (or of the key) at a path, so that
 * every message names `file:line:column` and the path. A path that does not exist is placed at its nearest
 * existing parent.
 */
export class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** 1-based line of the node at `path` (its key's line with `atKey`). */
  line(path: YamlPath, atKey = false): number {
    return this.position(path, atKey).line;
  }

  /** 1-based line and column of the node at `path` (of its key with `atKey`). */
  position(path: YamlPath, atKey = false): { line: number; col: number } {
    let node: unknown = this.doc.contents;
    let found: { key?: Node; value?: Node } = { value: node as Node };
    for (const part of path) {
      if (isMap(node)) {
        const pair = (node.items as Pair<unknown, unknown>[]).find((item) => keyOf(item) === String(part));
        if (!pair) break;
        found = { key: pair.key as Node, value: pair.value as Node };
        node = pair.value;
      } else if (isSeq(node) && typeof part === 'number' && node.items[part] !== undefined) {
        node = node.items[part];
        found = { value: node as Node };
      } else {
        break;
      }
    }
    const target = atKey ? (found.key ?? found.value) : (found.value ?? found.key);
    const offset = target?.range?.[0] ?? found.key?.range?.[0] ?? 0;
    return this.lines.linePos(offset);
  }
}

function keyOf(pair: Pair<unknown, unknown>): string | undefined {
  const key = pair.key;
  if (isScalar(key)) return String(key.value);
  return typeof key === 'string' ? key : undefined;
}

/** `reactors.charge.rules[0].container`; a name that is not a plain word is quoted. */
export function formatPath(path: YamlPath): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else if (/^[A-Za-z0-9_$-]+$/.test(part)) text += text === '' ? part : `.${part}`;
    else text += `[${JSON.stringify(part)}]`;
  }
  return text;
}

/** The closest of `candidates` to `name` (by edit distance), when close enough to be a typo. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}
