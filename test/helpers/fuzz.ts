/**
 * Seeded generators of hostile HTTP input, for the fuzz test: the same seed gives the same
 * requests, so a failure is replayed with `SVC_FUZZ_SEED=<seed>`.
 */

/** mulberry32: a small PRNG with a 32-bit seed, good enough to pick cases. */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  bytes(length: number): Buffer {
    return Buffer.from(Array.from({ length }, () => this.int(0, 255)));
  }

  string(max = 20): string {
    const alphabet = [
      'a',
      'Z',
      '0',
      ' ',
      '"',
      '\\',
      '/',
      '{',
      '}',
      '{{',
      '}}',
      '%',
      '\u00e9',
      '\u20ac',
      '\u{1f600}',
      '\u0000',
      '\n',
      '\ud800',
      '*',
      ':',
      '.',
      '-',
    ];
    return Array.from({ length: this.int(0, max) }, () => this.pick(alphabet)).join('');
  }
}

/** Any JSON value, nested at most `depth` more levels. */
export function randomJson(random: Random, depth = 3): unknown {
  const kind = random.int(0, depth > 0 ? 9 : 6);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return random.chance(0.5);
    case 2:
      return random.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 42]);
    case 3:
    case 4:
      return random.string();
    case 5:
      return random.pick([
        '{{ missing-token }}',
        '2030-06-30T23:59:60Z',
        '00000000-0000-4000-8000-000000000000',
        'https://127.0.0.1:1/x',
        '',
      ]);
    case 6:
      return random.pick(['token', 'card', 'bank', 'private', 'management', 'token:read', '/pci/']);
    case 7:
      return Array.from({ length: random.int(0, 4) }, () => randomJson(random, depth - 1));
    default: {
      const object: Record<string, unknown> = {};
      const keys = [
        'name',
        'type',
        'data',
        'id',
        'args',
        'code',
        'configuration',
        'permissions',
        'rules',
        'expires_at',
        '__proto__',
        'constructor',
        random.string(8),
      ];
      for (let i = random.int(0, 4); i > 0; i--) {
        Object.defineProperty(object, random.pick(keys), {
          value: randomJson(random, depth - 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return object;
    }
  }
}

/** A body for a route, from a valid example: as is, changed a little, or not JSON at all. */
export function mutateBody(random: Random, example: unknown): { body: Buffer | undefined; label: string } {
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const withField = (value: unknown): unknown => {
    if (typeof example !== 'object' || example === null || Array.isArray(example)) return value;
    const keys = Object.keys(example);
    const key = keys.length > 0 && random.chance(0.7) ? random.pick(keys) : random.string(6);
    return { ...example, [key]: value };
  };
  switch (random.int(0, 14)) {
    case 0:
    case 1:
    case 2:
      return { body: json(example), label: 'valid example' };
    case 3:
    case 4:
      return { body: json(withField(randomJson(random))), label: 'a field changed' };
    case 5:
      return { body: json(randomJson(random)), label: 'random JSON' };
    case 6: {
      const text = JSON.stringify(example);
      return { body: Buffer.from(text.slice(0, random.int(0, Math.max(0, text.length - 1)))), label: 'truncated' };
    }
    case 7: {
      const text = Buffer.from(JSON.stringify(withField('x')));
      const at = text.lastIndexOf('x');
      return {
        body: Buffer.concat([
          text.subarray(0, at),
          random.bytes(random.int(1, 3)).map((byte) => byte | 0x80),
          text.subarray(at + 1),
        ]),
        label: 'invalid UTF-8',
      };
    }
    case 8: {
      const depth = random.pick([63, 64, 65, 200, 5000, 50_000]);
      const open = random.chance(0.5) ? '[' : '{"a":';
      const close = open === '[' ? ']' : '}';
      return {
        body: Buffer.from(
          JSON.stringify(withField('\u0001')).replace('"\\u0001"', `${open.repeat(depth)}1${close.repeat(depth)}`),
        ),
        label: `nested ${depth}`,
      };
    }
    case 9:
      return { body: random.chance(0.5) ? Buffer.alloc(0) : undefined, label: 'empty' };
    case 10:
      return { body: random.bytes(random.int(1, 64)), label: 'random bytes' };
    case 11:
      return { body: json(withField('y'.repeat(random.pick([1000, 100_000])))), label: 'a long string' };
    case 12:
      return {
        body: Buffer.from(
          JSON.stringify(example).replace(/^\{/, '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},'),
        ),
        label: 'prototype keys',
      };
    case 13:
      return { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json(example)]), label: 'BOM' };
    default:
      return {
        body: Buffer.from(
          JSON.stringify(withField(0)).replace(
            /:0([,}])/,
            `:${random.pick(['1e400', '-', '01', 'NaN', '12345678901234567890123', '.5', 'undefined'])}$1`,
          ),
        ),
        label: 'bad number',
      };
  }
}

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  ';;;',
  'application/json;;charset="utf-8"',
  'application/vnd.api+json',
];

/** Percent-encoded; a lone surrogate (which encodeURIComponent refuses) becomes `?`. */
export function encode(text: string): string {
  return encodeURIComponent(
    text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '?'),
  );
}

/** A path parameter: a good id, another kind of id, or something no id looks like. */
export function mutateId(random: Random, good: string): string {
  switch (random.int(0, 9)) {
    case 0:
    case 1:
    case 2:
      return good;
    case 3:
      return good.toUpperCase();
    case 4:
      return '00000000-0000-4000-8000-000000000000';
    case 5:
      return 'x'.repeat(random.pick([101, 200, 201, 1025, 3000]));
    case 6:
      return random.pick(['%ff', '%', '%2', '%00', '%2F', '..', '%2e%2e', 'a%20b', '%C3%A9', '%F0%9F%98%80']);
    case 7:
      return encode(random.string(12)) || 'e';
    case 8:
      return `${good}/extra`;
    default:
      return '';
  }
}

/** A query string (with its `?`), of page, size, filters and oddities. */
export function randomQuery(random: Random): string {
  const parts: string[] = [];
  for (let i = random.int(0, 3); i > 0; i--) {
    switch (random.int(0, 7)) {
      case 0:
        parts.push(
          `page=${random.pick(['1', '2', '0', '-1', '1e3', '0x10', '%205', '99999999999999999999', '1.5', '', 'x'])}`,
        );
        break;
      case 1:
        parts.push(`size=${random.pick(['1', '100', '101', '0', '20 ', '+5', '1e1'])}`);
        break;
      case 2:
        parts.push(
          Array.from(
            { length: random.pick([2, 101, 300]) },
            (_, n) => `${random.pick(['id', 'page', 'name'])}=${n}`,
          ).join('&'),
        );
        break;
      case 3:
        parts.push(`name=${random.pick(['*', 'a*b*c', '%ff', encode(random.string(10)), 'x'.repeat(300)])}`);
        break;
      case 4:
        parts.push(
          random.pick([
            '__proto__[x]=1',
            'constructor[prototype][x]=1',
            'a[b][c]=d',
            '&&&',
            '=',
            '%ff=%ff',
            'type=card',
            'container=/pci',
          ]),
        );
        break;
      case 5:
        parts.push(`id=${random.pick(['00000000-0000-4000-8000-000000000000', 'not-a-uuid', 'x'.repeat(201)])}`);
        break;
      case 6:
        parts.push(`svc-proxy-key=${random.pick(['', 'proxy_local_nothing', random.string(5)])}`);
        break;
      default:
        parts.push(`${encode(random.string(5))}=${encode(random.string(5))}`);
    }
  }
  return parts.length > 0 || random.chance(0.2) ? `?${parts.join('&')}` : '';
}
