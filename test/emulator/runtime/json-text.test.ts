import { describe, expect, it } from 'vitest';
import { frameJson, JsonText } from '../../../src/emulator/runtime/json-text.js';

describe('frameJson', () => {
  const fields = { type: 'invoke', id: 7, vid: 'r@1#1', requestId: 'req', configuration: { k: 'v' }, svc: false };
  const args = { card: '4242', nested: [1, { a: 'é\u2028"' }] };

  it('puts args given as JsonText in as they are: the same frame as writing them out', () => {
    const frame = frameJson({ ...fields, args: new JsonText(JSON.stringify(args)) });
    expect(JSON.parse(frame)).toEqual({ ...fields, args });
  });

  it('writes out args given as a value', () => {
    expect(frameJson({ ...fields, args })).toBe(JSON.stringify({ ...fields, args }));
  });
});
