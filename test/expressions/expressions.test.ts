import { describe, expect, it } from 'vitest';
import {
  countExpressions,
  ExpansionLimitError,
  findTokenIds,
  substitute,
  substituteInJsonText,
  substituteInText,
} from '../../src/expressions/index.js';
import { MAX_DEPTH, exceedsDepth } from '../../src/lib/json-depth.js';

const UUID = '3f2b1c9e-8a47-4d2b-9c1e-5f6a7b8c9d0e';
const OTHER_UUID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

function dataOf(entries: Record<string, unknown>): Map<string, unknown> {
  return new Map(Object.entries(entries));
}

describe('findTokenIds', () => {
  it.each([
    ['{{id}}', `{{${UUID}}}`],
    ['{{ id }}', `{{ ${UUID} }}`],
    ['{{   id}}', `{{   ${UUID}}}`],
    ['{{id   }}', `{{${UUID}   }}`],
    ['{{\\tid\\n}}', `{{\t${UUID}\n}}`],
  ])('finds the id in the form %s', (_form, text) => {
    expect(findTokenIds(text)).toEqual([UUID]);
  });

  it.each(['card_1', 'my.token', 'tenant:card:42', 'a-b', 'A9', 'x', 'Z_._:-1'])('accepts the custom id %j', (id) => {
    expect(findTokenIds(`{{ ${id} }}`)).toEqual([id]);
  });

  it('takes ids up to 200 characters, not longer', () => {
    const longest = `a${'b'.repeat(199)}`;
    expect(findTokenIds(`{{${longest}}}`)).toEqual([longest]);
    expect(findTokenIds(`{{${longest}c}}`)).toEqual([]);
  });

  it.each([
    ['empty braces', '{{}}'],
    ['only spaces', '{{   }}'],
    ['spaced braces', '{ {id} }'],
    ['two words', '{{ a b }}'],
    ['unclosed', '{{id}'],
    ['unopened', '{id}}'],
    ['single braces', '{id}'],
    ['an id starting with "_"', '{{_id}}'],
    ['an id starting with "-"', '{{-id}}'],
    ['a character outside the id alphabet', '{{ a/b }}'],
    ['a space inside the braces pair', '{ { id } }'],
  ])('ignores %s', (_name, text) => {
    expect(findTokenIds(text)).toEqual([]);
    expect(findTokenIds({ nested: [text] })).toEqual([]);
  });

  it('finds expressions anywhere in nested objects and arrays', () => {
    const value = {
      card: { number: '{{ card_1 }}', holder: { name: 'x {{name_1}} y' } },
      items: [1, true, null, ['{{ deep.in.array }}'], { a: [{ b: '{{obj:in:arr}}' }] }],
      plain: 'no expressions here',
    };
    expect(findTokenIds(value)).toEqual(['card_1', 'name_1', 'deep.in.array', 'obj:in:arr']);
  });

  it('searches values only, never object keys', () => {
    expect(findTokenIds({ '{{ key_id }}': 'plain', nested: { '{{other}}': '{{ value_id }}' } })).toEqual(['value_id']);
  });

  it('returns distinct ids in order of first appearance', () => {
    const value = ['{{ b }}', { x: '{{a}} and {{ b }} and {{c}}' }, '{{ a }}', '{{c}}{{d}}'];
    expect(findTokenIds(value)).toEqual(['b', 'a', 'c', 'd']);
  });

  it('finds several expressions in one string', () => {
    expect(findTokenIds(`{{${UUID}}}-{{ ${OTHER_UUID} }}:{{x}}`)).toEqual([UUID, OTHER_UUID, 'x']);
  });

  it('returns nothing for values without strings', () => {
    for (const value of [undefined, null, 42, true, [], {}, [1, [2, { a: 3 }]]]) {
      expect(findTokenIds(value)).toEqual([]);
    }
  });

  it('gives the same answer when called twice (no regex state leaks between calls)', () => {
    const text = 'a {{x}} b {{y}}';
    expect(findTokenIds(text)).toEqual(['x', 'y']);
    expect(findTokenIds(text)).toEqual(['x', 'y']);
  });
});

describe('substitute', () => {
  const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 };

  it.each([`{{${UUID}}}`, `{{ ${UUID} }}`, `{{   ${UUID}}}`])(
    'replaces the whole-string expression %j by the data itself',
    (text) => {
      expect(substitute(text, dataOf({ [UUID]: card }))).toEqual(card);
    },
  );

  it('keeps the type of the data for a whole-string expression', () => {
    const data = dataOf({ obj: card, num: 42, str: 'text', bool: false, nul: null, arr: [1, 'two'] });
    const result = substitute(
      { o: '{{obj}}', n: '{{ num }}', s: '{{str}}', b: '{{bool}}', z: '{{nul}}', a: '{{arr}}' },
      data,
    );
    expect(result).toEqual({ o: card, n: 42, s: 'text', b: false, z: null, a: [1, 'two'] });
    const typed = result as Record<string, unknown>;
    expect(typeof typed.n).toBe('number');
    expect(typeof typed.b).toBe('boolean');
    expect(typed.z).toBeNull();
    expect(Array.isArray(typed.a)).toBe(true);
  });

  it('inserts string data as it is inside a larger string', () => {
    expect(substitute('Bearer {{ secret }}', dataOf({ secret: 'abc"def' }))).toBe('Bearer abc"def');
  });

  it('inserts complex and non-string data as its JSON inside a larger string', () => {
    const data = dataOf({ obj: { a: 1, b: 'x' }, arr: [1, 2], num: 7, bool: true, nul: null });
    expect(substitute('obj={{obj}}', data)).toBe('obj={"a":1,"b":"x"}');
    expect(substitute('arr={{ arr }};', data)).toBe('arr=[1,2];');
    expect(substitute('n={{num}}, b={{bool}}, z={{nul}}', data)).toBe('n=7, b=true, z=null');
  });

  it('replaces several expressions in one string', () => {
    const data = dataOf({ [UUID]: 'first', [OTHER_UUID]: 'second' });
    expect(substitute(`{{${UUID}}} and {{ ${OTHER_UUID} }} then {{${UUID}}}`, data)).toBe(
      'first and second then first',
    );
    // Two expressions side by side are not a whole-string expression.
    expect(substitute(`{{${UUID}}}{{${OTHER_UUID}}}`, data)).toBe('firstsecond');
  });

  it('does not interpret "$" patterns in the data as replacement patterns', () => {
    expect(substitute('x {{ a }} y', dataOf({ a: "$& $1 $' $$" }))).toBe("x $& $1 $' $$ y");
  });

  it('does not expand expressions that appear inside the inserted data', () => {
    const data = dataOf({ a: '{{ b }}', b: 'B' });
    expect(substitute('{{a}}', data)).toBe('{{ b }}');
    expect(substitute('x {{a}}', data)).toBe('x {{ b }}');
  });

  it('substitutes anywhere in nested objects and arrays, keeping the structure', () => {
    const value = {
      card: '{{ card_1 }}',
      list: ['{{ name }}', 'hello {{name}}', 3, null, true, { deep: ['{{ card_1 }}'] }],
      untouched: 'plain',
    };
    expect(substitute(value, dataOf({ card_1: card, name: 'Ada' }))).toEqual({
      card,
      list: ['Ada', 'hello Ada', 3, null, true, { deep: [card] }],
      untouched: 'plain',
    });
  });

  it('leaves object keys alone', () => {
    const result = substitute({ '{{ a }}': '{{ a }}' }, dataOf({ a: 'A' }));
    expect(result).toEqual({ '{{ a }}': 'A' });
  });

  it.each(['{{}}', '{ {id} }', '{{ a b }}', '{{id}', '{{_id}}', 'just text'])(
    'leaves the non-expression %j unchanged',
    (text) => {
      // The data would be used if any of these were taken for an expression.
      const data = dataOf({ id: 'X', a: 'X', b: 'X', _id: 'X' });
      expect(substitute(text, data)).toBe(text);
      expect(substitute({ k: [text] }, data)).toEqual({ k: [text] });
    },
  );

  it('passes primitives and empty containers through', () => {
    const data = dataOf({});
    expect(substitute(42, data)).toBe(42);
    expect(substitute(null, data)).toBeNull();
    expect(substitute(undefined, data)).toBeUndefined();
    expect(substitute(true, data)).toBe(true);
    expect(substitute([], data)).toEqual([]);
    expect(substitute({}, data)).toEqual({});
  });

  it('throws when an id has no data', () => {
    const data = dataOf({ known: 'k' });
    expect(() => substitute('{{ missing }}', data)).toThrow(/missing/);
    expect(() => substitute('x {{known}} {{missing}}', data)).toThrow(/missing/);
    expect(() => substitute({ a: ['{{ missing }}'] }, data)).toThrow(/no data for token missing/);
  });

  it('keeps a key named __proto__ as a plain own key without polluting prototypes', () => {
    const input = JSON.parse('{"__proto__": {"polluted": "{{ a }}"}, "safe": "{{a}}"}') as unknown;
    const result = substitute(input, dataOf({ a: 'yes' })) as Record<string, unknown>;

    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect((result as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect((Object.prototype as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.parse(JSON.stringify(result))).toEqual(JSON.parse('{"__proto__": {"polluted": "yes"}, "safe": "yes"}'));
    expect(result.safe).toBe('yes');
  });

  it('finds ids under a __proto__ key too', () => {
    const input = JSON.parse('{"__proto__": {"x": "{{ hidden }}"}}') as unknown;
    expect(findTokenIds(input)).toEqual(['hidden']);
  });

  it('does not mutate its inputs', () => {
    const value = { a: '{{ x }}', list: ['{{x}}', { b: 'pre {{ x }}' }] };
    const snapshot = structuredClone(value);
    const inner = { secret: 'v' };
    const data = dataOf({ x: inner });

    const result = substitute(value, data) as { a: unknown; list: unknown[] };

    expect(value).toEqual(snapshot);
    expect(result).not.toBe(value);
    expect(result.list).not.toBe(value.list);
    expect(data.size).toBe(1);
    expect(inner).toEqual({ secret: 'v' });
    expect(result.a).toEqual(inner);
  });

  it('substitutes every id findTokenIds reports', () => {
    const value = { a: ['{{ p }}', 'q={{q}}'], b: { c: '{{r}} {{ p }}' } };
    const ids = findTokenIds(value);
    const data = new Map(ids.map((id) => [id, id.toUpperCase()]));
    expect(substitute(value, data)).toEqual({ a: ['P', 'q=Q'], b: { c: 'R P' } });
    expect(findTokenIds(substitute(value, data))).toEqual([]);
  });
});

describe('substituteInJsonText', () => {
  const data = new Map<string, unknown>([
    ['t1', { number: '4242' }],
    ['t2', 'plain'],
  ]);

  it('replaces whole-string values by the data and embedded ones by text, keeping every other byte', () => {
    const text = '{\n  "a" : "{{ t1 }}",\n  "b": "x {{t2}} y",\n  "n": 12345678901234567890, "f": 1.50 }';
    expect(substituteInJsonText(text, data)).toBe(
      '{\n  "a" : {"number":"4242"},\n  "b": "x plain y",\n  "n": 12345678901234567890, "f": 1.50 }',
    );
  });

  it('never touches keys, and handles escaped quotes inside strings', () => {
    const text = '{"{{t2}}": "{{t2}}", "q": "say \\"{{t2}}\\""}';
    expect(JSON.parse(substituteInJsonText(text, data))).toEqual({ '{{t2}}': 'plain', q: 'say "plain"' });
  });

  it('works inside arrays and nested objects', () => {
    expect(JSON.parse(substituteInJsonText('[["{{t1}}"], {"x": {"y": "{{ t2 }}"}}]', data))).toEqual([
      [{ number: '4242' }],
      { x: { y: 'plain' } },
    ]);
  });
});

describe('hostile nesting', () => {
  /** `[[…[inner]…]]`, `depth` arrays deep, built without recursion. */
  const nested = (depth: number, inner: unknown): unknown => {
    let value = inner;
    for (let i = 0; i < depth; i++) value = [value];
    return value;
  };

  it('findTokenIds walks any depth without recursion, in document order', () => {
    const value = { first: '{{ a }}', deep: nested(200_000, '{{ b }}'), last: ['{{ c }}', '{{ a }}'] };
    expect(findTokenIds(value)).toEqual(['a', 'b', 'c']);
  });

  it('substitute refuses past MAX_DEPTH rather than overflow the stack', () => {
    const data = new Map([['a', 'x']]);
    expect(substitute(nested(MAX_DEPTH, '{{ a }}'), data)).toEqual(nested(MAX_DEPTH, 'x'));
    expect(() => substitute(nested(MAX_DEPTH + 1, '{{ a }}'), data)).toThrow(RangeError);
    expect(() => substitute(nested(200_000, '{{ a }}'), data)).toThrow(RangeError);
    expect(exceedsDepth(nested(MAX_DEPTH, 1), MAX_DEPTH)).toBe(false);
    expect(exceedsDepth(nested(MAX_DEPTH + 1, 1), MAX_DEPTH)).toBe(true);
  });
});

describe('the output limit', () => {
  const MB = 1024 * 1024;
  const big = 'x'.repeat(MB);

  /** Token data whose lookups are counted: how far a substitution went before it stopped. */
  class CountedData extends Map<string, unknown> {
    lookups = 0;
    override get(id: string): unknown {
      this.lookups++;
      return super.get(id);
    }
  }

  it('counts every occurrence, refusing before the value that crosses the limit is built', () => {
    // 1,000 whole-string expressions of a 1 MB token: a gigabyte as JSON.
    const value = Array.from({ length: 1000 }, () => '{{ a }}');
    expect(() => substitute(value, dataOf({ a: big }), 5 * MB)).toThrow(ExpansionLimitError);
    // Ten tokens of 1 MB each: the fifth crosses 5 MB (with its quotes), the rest are never looked up.
    const data = new CountedData(Array.from({ length: 10 }, (_, i) => [`t${i}`, big]));
    const ten = Array.from({ length: 10 }, (_, i) => `{{t${i}}}`);
    expect(() => substitute(ten, data, 5 * MB)).toThrow(ExpansionLimitError);
    expect(data.lookups).toBe(5);
  });

  it('refuses one string of many expressions without building it', () => {
    // Built, this string would be 1,000 MB: past what V8 can hold, a RangeError rather than this.
    const text = '{{a}}'.repeat(1000);
    expect(() => substitute({ k: text }, dataOf({ a: big }), 5 * MB)).toThrow(ExpansionLimitError);
    expect(() => substituteInText(text, dataOf({ a: big }), 5 * MB)).toThrow(ExpansionLimitError);
    expect(() => substituteInJsonText(JSON.stringify({ k: text }), dataOf({ a: big }), 5 * MB)).toThrow(
      ExpansionLimitError,
    );
  });

  it('measures a value as its JSON, the input included, to the byte', () => {
    // {"k":"abcd"} is 12 bytes; as JSON "a\"b" is 6.
    expect(substitute({ k: '{{a}}' }, dataOf({ a: 'abcd' }), 12)).toEqual({ k: 'abcd' });
    expect(() => substitute({ k: '{{a}}' }, dataOf({ a: 'abcd' }), 11)).toThrow(ExpansionLimitError);
    expect(substitute('{{a}}', dataOf({ a: 'a"b' }), 6)).toBe('a"b');
    expect(() => substitute('{{a}}', dataOf({ a: 'a"b' }), 5)).toThrow(ExpansionLimitError);
    expect(substitute('<{{a}}>', dataOf({ a: { n: 1 } }), 13)).toBe('<{"n":1}>');
    expect(() => substitute('<{{a}}>', dataOf({ a: { n: 1 } }), 12)).toThrow(ExpansionLimitError);
  });

  it('measures text as its UTF-8 bytes, and a JSON text from the bytes as sent', () => {
    expect(substituteInText('é {{a}}', dataOf({ a: 'a"b' }), 6)).toBe('é a"b');
    expect(() => substituteInText('é {{a}}', dataOf({ a: 'a"b' }), 5)).toThrow(ExpansionLimitError);
    const text = '{"k": "{{a}}", "n": 1}';
    expect(substituteInJsonText(text, dataOf({ a: 'ab' }), text.length - 3)).toBe('{"k": "ab", "n": 1}');
    expect(() => substituteInJsonText(text, dataOf({ a: 'ab' }), text.length - 4)).toThrow(ExpansionLimitError);
  });

  it('counts expressions no further than one past its bounds', () => {
    // 50 MB of distinct expressions: four million ids to collect, were the count not stopped.
    const text = Array.from({ length: 4_000_000 }, (_, i) => `{{t${i}}}`).join('');
    expect(countExpressions(text, { ids: 100, occurrences: 10_000 })).toEqual({
      ids: Array.from({ length: 101 }, (_, i) => `t${i}`),
      occurrences: 101,
    });
    const same = { a: '{{x}}'.repeat(20_000), b: ['{{ y }}'] };
    expect(countExpressions(same, { ids: 100, occurrences: 10_000 })).toEqual({ ids: ['x'], occurrences: 10_001 });
    expect(countExpressions(same)).toEqual({ ids: ['x', 'y'], occurrences: 20_001 });
  });

  it('costs nothing for a value without expressions, and shares what it does not change', () => {
    const untouched = { list: [1, 2, 3], text: 'plain' };
    const value = { untouched, changed: ['{{a}}', 'plain'] };
    const result = substitute(value, dataOf({ a: 'A' }), 100) as typeof value;
    expect(result).toEqual({ untouched, changed: ['A', 'plain'] });
    expect(result.untouched).toBe(untouched);
    expect(substitute(untouched, dataOf({}), 1)).toBe(untouched);
  });
});
