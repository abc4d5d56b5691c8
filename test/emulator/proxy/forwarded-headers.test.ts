import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/emulator/errors.js';
import {
  forwardableHeaders,
  isJsonContentType,
  responseHeaders,
  transformHeaders,
} from '../../../src/emulator/proxy/forwarded-headers.js';

const OWNER = 'The request transform of proxy p';

/** Node's rawHeaders from name/value pairs. */
const raw = (...pairs: [string, string][]) => pairs.flat();

describe('forwardableHeaders', () => {
  it("keeps the caller's names in the caller's own case, with their values", () => {
    const headers = forwardableHeaders(
      raw(['X-Custom-ID', 'a1'], ['authorization', 'Bearer t'], ['Content-Type', 'application/json'], ['x_under', 'u']),
    );
    expect(headers).toEqual({
      'X-Custom-ID': 'a1',
      authorization: 'Bearer t',
      'Content-Type': 'application/json',
      x_under: 'u',
    });
  });

  it('drops names with other characters than alphanumerics, hyphen and underscore', () => {
    const headers = forwardableHeaders(
      raw(
        ['X.Dot', '1'],
        ['X Space', '2'],
        ['X:Colon', '3'],
        ['X/Slash', '4'],
        ['Ünicode', '5'],
        ['X+Plus', '6'],
        ['', '7'],
        ['Ok-Name_2', '8'],
      ),
    );
    expect(headers).toEqual({ 'Ok-Name_2': '8' });
  });

  it("drops svc's own headers and those of this hop, whatever their case", () => {
    const dropped = [
      'SVC-API-KEY',
      'svc-api-key',
      'Svc-Proxy-Key',
      'SVC-PROXY-KEEP-ALIVE',
      'svc-proxy-connection',
      'Host',
      'CONNECTION',
      'Content-Length',
      'Transfer-Encoding',
      'transfer-encoding',
    ];
    const headers = forwardableHeaders(raw(...dropped.map((name): [string, string] => [name, 'x']), ['X-Kept', 'yes']));
    expect(headers).toEqual({ 'X-Kept': 'yes' });
  });

  it('joins a repeated header under the case of its first occurrence', () => {
    const headers = forwardableHeaders(
      raw(['X-Multi', 'one'], ['Accept', 'text/plain'], ['x-multi', 'two'], ['X-MULTI', 'three']),
    );
    expect(headers).toEqual({ 'X-Multi': 'one, two, three', Accept: 'text/plain' });
  });

  it('gives nothing for no headers, and ignores a dangling name', () => {
    expect(forwardableHeaders([])).toEqual({});
    expect(forwardableHeaders(['X-Only-Name'])).toEqual({});
  });
});

describe('responseHeaders', () => {
  const destination = {
    'content-type': 'application/json',
    'content-length': '12',
    connection: 'keep-alive',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'set-cookie': ['a=1', 'b=2'],
    'x-custom': 'yes',
    'x-missing': undefined,
    'svc-trace-id': 'from-the-destination',
  };

  it('passes every header but the hop-by-hop ones, arrays as arrays', () => {
    expect(responseHeaders(destination, true)).toEqual({
      'content-type': 'application/json',
      'content-length': '12',
      'set-cookie': ['a=1', 'b=2'],
      'x-custom': 'yes',
    });
  });

  it('drops content-length when the body will be rewritten', () => {
    expect(responseHeaders(destination, false)).toEqual({
      'content-type': 'application/json',
      'set-cookie': ['a=1', 'b=2'],
      'x-custom': 'yes',
    });
  });
});

describe('transformHeaders', () => {
  it('keeps what a transform returned, names a caller could not send included, values as strings', () => {
    expect(
      transformHeaders(
        {
          'X.Signed': 'sig',
          'X-Count': 3,
          'X-List': ['a', 'b'],
          Authorization: 'Bearer x',
          'svc-transaction-id': 't1',
        },
        OWNER,
      ),
    ).toEqual({
      'X.Signed': 'sig',
      'X-Count': '3',
      'X-List': 'a, b',
      Authorization: 'Bearer x',
      'svc-transaction-id': 't1',
    });
  });

  it('drops framing and svc credential headers, and empty values', () => {
    expect(
      transformHeaders(
        {
          'Content-Length': '5',
          'transfer-encoding': 'chunked',
          Host: 'evil',
          'SVC-API-KEY': 'k',
          'svc-proxy-key': 'k',
          'X-Null': null,
          'X-Undefined': undefined,
          'X-Kept': 'ok',
        },
        OWNER,
      ),
    ).toEqual({ 'X-Kept': 'ok' });
  });

  it.each([
    [{ 'X Space': '1' }, /header name "X Space" is not an HTTP token/],
    [{ 'X:Colon': '1' }, /header name "X:Colon"/],
    [{ 'X-Split': 'a\r\nb' }, /header X-Split contains CR or LF/],
    [{ 'X-Nul': 'a\u0000' }, /header X-Nul contains NUL/],
    [{ 'X-Bell': 'a\u0007' }, /header X-Bell contains a control character/],
    [{ 'X-Wide': ['ok', '\u20ac'] }, /header X-Wide contains "€", outside Latin-1/],
  ])('refuses %o with a 500 naming the transform and the header', (headers, detail) => {
    let thrown: unknown;
    try {
      transformHeaders(headers, OWNER);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect((thrown as HttpError).status).toBe(500);
    expect((thrown as HttpError).detail).toMatch(/^The request transform of proxy p set an invalid header: /);
    expect((thrown as HttpError).detail).toMatch(detail);
  });

  it('gives no headers for anything but an object', () => {
    expect(transformHeaders(undefined, OWNER)).toEqual({});
    expect(transformHeaders(null, OWNER)).toEqual({});
    expect(transformHeaders('X-A: 1', OWNER)).toEqual({});
  });
});

describe('isJsonContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/vnd.api+json',
    'application/problem+json; charset=utf-8',
    '  application/json',
  ])('%s is JSON', (type) => expect(isJsonContentType(type)).toBe(true));

  it.each([
    'text/plain',
    'text/json',
    'application/jsonp',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    '',
  ])('%s is not JSON', (type) => expect(isJsonContentType(type)).toBe(false));

  it('no Content-Type is not JSON', () => {
    expect(isJsonContentType(undefined)).toBe(false);
  });
});
