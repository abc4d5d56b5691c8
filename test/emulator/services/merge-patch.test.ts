import { describe, expect, it } from 'vitest';
import { MERGE_PATCH_CONTENT_TYPE } from '../../../src/api/headers.js';
import { applyMergePatch } from '../../../src/emulator/services/merge-patch.js';

/** RFC 7386 Appendix A, every example: [target, patch, result]. */
const RFC_7386_APPENDIX_A: [target: unknown, patch: unknown, result: unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

/** A deep copy, to compare an input with what it was before the call. */
const snapshot = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));

describe('applyMergePatch', () => {
  it.each(
    RFC_7386_APPENDIX_A.map(
      ([target, patch, result]) => [JSON.stringify(target), JSON.stringify(patch), target, patch, result] as const,
    ),
  )('RFC 7386 A: %s + %s', (_t, _p, target, patch, result) => {
    expect(applyMergePatch(target, patch)).toStrictEqual(result);
  });

  it('covers all fifteen vectors of Appendix A', () => {
    expect(RFC_7386_APPENDIX_A).toHaveLength(15);
  });

  it('changes neither the target nor the patch', () => {
    for (const [target, patch] of RFC_7386_APPENDIX_A) {
      const targetBefore = snapshot(target);
      const patchBefore = snapshot(patch);
      applyMergePatch(target, patch);
      expect(target, JSON.stringify(targetBefore)).toStrictEqual(targetBefore);
      expect(patch, JSON.stringify(patchBefore)).toStrictEqual(patchBefore);
    }
  });

  it('returns a new object and shares no changed nested object with the target', () => {
    const target = { a: { b: 'c', keep: { deep: 1 } }, list: [1, 2] };
    const result = applyMergePatch(target, { a: { b: 'd' } }) as typeof target;
    expect(result).toStrictEqual({ a: { b: 'd', keep: { deep: 1 } }, list: [1, 2] });
    expect(result).not.toBe(target);
    expect(result.a).not.toBe(target.a);
    expect(target.a.b).toBe('c');
    // A later change of the result does not reach the target through the merged member.
    result.a.b = 'changed';
    expect(target.a.b).toBe('c');
  });

  it('does not mutate a patch whose nested object is applied to a missing member', () => {
    const patch = { a: { b: { c: null, d: 1 } } };
    const before = snapshot(patch);
    const result = applyMergePatch({}, patch) as { a: { b: Record<string, unknown> } };
    expect(result).toStrictEqual({ a: { b: { d: 1 } } });
    expect(patch).toStrictEqual(before);
    expect(result.a).not.toBe(patch.a);
  });

  it('keeps a __proto__ member of the patch as a plain own member without polluting Object.prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": "yes"}, "a": 1}') as Record<string, unknown>;
    const result = applyMergePatch({ b: 2 }, patch) as Record<string, unknown>;
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toStrictEqual({ polluted: 'yes' });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(result.polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(result).sort()).toEqual(['__proto__', 'a', 'b']);
    expect(JSON.parse(JSON.stringify(result))).toStrictEqual(
      JSON.parse('{"b":2,"__proto__":{"polluted":"yes"},"a":1}'),
    );
  });

  it('merges into an existing own __proto__ member rather than the prototype', () => {
    const target = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    const patch = JSON.parse('{"__proto__": {"y": 2, "x": null}}') as Record<string, unknown>;
    const result = applyMergePatch(target, patch) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(result, '__proto__')?.value).toStrictEqual({ y: 2 });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect((Object.prototype as Record<string, unknown>).y).toBeUndefined();
    // The target's own __proto__ member is unchanged.
    expect(Object.getOwnPropertyDescriptor(target, '__proto__')?.value).toStrictEqual({ x: 1 });
  });

  it('deletes an own __proto__ member with null', () => {
    const target = JSON.parse('{"__proto__": {"x": 1}, "a": 1}') as Record<string, unknown>;
    const result = applyMergePatch(target, JSON.parse('{"__proto__": null}')) as Record<string, unknown>;
    expect(Object.hasOwn(result, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(result).toStrictEqual({ a: 1 });
  });

  it('names the RFC 7386 media type', () => {
    expect(MERGE_PATCH_CONTENT_TYPE).toBe('application/merge-patch+json');
  });
});
