/**
 * The one JSON body decoder: the prototype-poisoning guards hold on the
 * short way it takes for text that cannot hold a poisoned key.
 */
import { describe, expect, it } from 'vitest';
import { jsonBody } from '../../../src/emulator/http/body.js';

function decode(text: string, contentType = 'application/json'): { error: Error | null; value?: unknown } {
  let outcome: { error: Error | null; value?: unknown } | undefined;
  jsonBody({ headers: { 'content-type': contentType } }, Buffer.from(text), (error, value) => {
    outcome = { error, value };
  });
  return outcome!;
}

describe('jsonBody', () => {
  it.each([
    ['__proto__', '{"a":{"__proto__":{"x":1}}}'],
    ['an escaped __proto__', '{"a":{"\\u005f_proto__":{"x":1}}}'],
    ['__proto__ escaped otherwise', '{"a":{"__pr\\u006fto__":{"x":1}}}'],
    ['constructor.prototype', '{"a":{"constructor":{"prototype":{"x":1}}}}'],
    ['an escaped constructor.prototype', '{"a":{"\\u0063onstructor":{"prototype":{"x":1}}}}'],
    ['__proto__ after a byte order mark', '\ufeff{"__proto__":{"x":1}}'],
  ])('refuses %s', (_name, text) => {
    expect(decode(text).error).toMatchObject({ code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 });
    expect(decode(text, 'application/json; charset=utf-8').error).toMatchObject({ statusCode: 400 });
  });

  it.each([
    [
      'plain JSON',
      '{"args":{"items":[{"price":2.5,"quantity":4}]}}',
      { args: { items: [{ price: 2.5, quantity: 4 }] } },
    ],
    ['text that names the keys as values', '{"a":"__proto__ and constructor"}', { a: '__proto__ and constructor' }],
    ['escapes elsewhere', '{"a":"line\\nbreak"}', { a: 'line\nbreak' }],
    ['a byte order mark', '\ufeff{"a":1}', { a: 1 }],
  ])('reads %s', (_name, text, value) => {
    expect(decode(text)).toEqual({ error: null, value });
  });
});
