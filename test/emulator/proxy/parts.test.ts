import { describe, expect, it } from 'vitest';
import {
  destinationUrl,
  forwardableHeaders,
  forwardedQuery,
  isJsonContentType,
  pathSuffix,
  responseHeaders,
  transformHeaders,
  unsafePath,
} from '../../../src/emulator/proxy/parts.js';
import { HttpError } from '../../../src/emulator/errors.js';

const OWNER = 'The request transform of proxy p';

/** Node's rawHeaders from name/value pairs. */
const raw = (...pairs: [string, string][]) => pairs.flat();

describe('forwardableHeaders', () => {
  it("keeps the caller's names in the caller's own case, with their values", () => {
    const headers = forwardableHeaders(raw(['X-Custom-ID', 'a1'], ['authorization', 'Bearer t'], ['Content-Type', 'application/json'], ['x_under', 'u']));
    expect(headers).toEqual({ 'X-Custom-ID': 'a1', authorization: 'Bearer t', 'Content-Type': 'application/json', x_under: 'u' });
  });

  it('drops names with other characters than alphanumerics, hyphen and underscore', () => {
    const headers = forwardableHeaders(
      raw(['X.Dot', '1'], ['X Space', '2'], ['X:Colon', '3'], ['X/Slash', '4'], ['Ünicode', '5'], ['X+Plus', '6'], ['', '7'], ['Ok-Name_2', '8']),
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
    const headers = forwardableHeaders(raw(['X-Multi', 'one'], ['Accept', 'text/plain'], ['x-multi', 'two'], ['X-MULTI', 'three']));
    expect(headers).toEqual({ 'X-Multi': 'one, two, three', Accept: 'text/plain' });
  });

  it('gives nothing for no headers, and ignores a dangling name', () => {
    expect(forwardableHeaders([])).toEqual({});
    expect(forwardableHeaders(['X-Only-Name'])).toEqual({});
  });
});

describe('forwardedQuery', () => {
  it('removes svc-proxy-key and keeps the rest exactly as sent, in order', () => {
    const { query, proxyKey } = forwardedQuery('/proxy/x?b=2&svc-proxy-key=proxy_local_abc&a=%20x+y&c=%E2%9C%93&flag');
    expect(query).toBe('?b=2&a=%20x+y&c=%E2%9C%93&flag');
    expect(proxyKey).toBe('proxy_local_abc');
  });

  it('removes every svc-proxy-key parameter (also percent-encoded names) and returns the first one, decoded', () => {
    const { query, proxyKey } = forwardedQuery('/proxy?svc-proxy-key=k%2B1&x=1&svc%2Dproxy%2Dkey=k2&svc-proxy-key=k3&y=2');
    expect(query).toBe('?x=1&y=2');
    expect(proxyKey).toBe('k+1');
  });

  it('keeps parameters that only look like the key', () => {
    const { query, proxyKey } = forwardedQuery('/proxy?svc-proxy-keys=1&SVC-PROXY-KEY=2&my-svc-proxy-key=3');
    expect(query).toBe('?svc-proxy-keys=1&SVC-PROXY-KEY=2&my-svc-proxy-key=3');
    expect(proxyKey).toBeUndefined();
  });

  it('gives an empty query when nothing is left, or there was none', () => {
    expect(forwardedQuery('/proxy?svc-proxy-key=abc')).toEqual({ query: '', proxyKey: 'abc' });
    expect(forwardedQuery('/proxy/a/b')).toEqual({ query: '', proxyKey: undefined });
    expect(forwardedQuery('/proxy?')).toEqual({ query: '', proxyKey: undefined });
  });

  it('decodes a key sent with + for spaces and survives malformed escapes', () => {
    expect(forwardedQuery('/proxy?bad=%E0%A4%A&svc-proxy-key=a+b')).toEqual({ query: '?bad=%E0%A4%A', proxyKey: 'a b' });
    expect(forwardedQuery('/proxy?svc-proxy-key=%E0%A4%A&x=1')).toEqual({ query: '?x=1', proxyKey: '%E0%A4%A' });
  });
});

describe('pathSuffix', () => {
  it('is what follows /proxy, without the query', () => {
    expect(pathSuffix('/proxy')).toBe('');
    expect(pathSuffix('/proxy?x=1')).toBe('');
    expect(pathSuffix('/proxy/')).toBe('/');
    expect(pathSuffix('/proxy/v1/charges?expand=a&b=c')).toBe('/v1/charges');
    expect(pathSuffix('/proxy/a%20b/c')).toBe('/a%20b/c');
  });
});

describe('destinationUrl', () => {
  it('appends the suffix to the base path without a double slash', () => {
    expect(destinationUrl('http://127.0.0.1:9/base/', '/v1/x', '').href).toBe('http://127.0.0.1:9/base/v1/x');
    expect(destinationUrl('http://127.0.0.1:9/base', '/v1/x', '').href).toBe('http://127.0.0.1:9/base/v1/x');
    expect(destinationUrl('http://127.0.0.1:9', '/v1/x', '').href).toBe('http://127.0.0.1:9/v1/x');
    expect(destinationUrl('http://127.0.0.1:9/', '/v1/x', '').href).toBe('http://127.0.0.1:9/v1/x');
  });

  it('leaves the destination as it is without a suffix or query', () => {
    expect(destinationUrl('https://api.example.com/base/path', '', '').href).toBe('https://api.example.com/base/path');
    expect(destinationUrl('https://api.example.com', '', '').href).toBe('https://api.example.com/');
  });

  it('keeps percent-encodings of the suffix', () => {
    expect(destinationUrl('http://h.test/base', '/a%20b/%2F', '').pathname).toBe('/base/a%20b/%2F');
  });

  it("puts the destination's own query before the caller's", () => {
    expect(destinationUrl('http://h.test/base?api=1&v=2', '/x', '?q=%20a&r').href).toBe('http://h.test/base/x?api=1&v=2&q=%20a&r');
    expect(destinationUrl('http://h.test/base', '', '?q=1').href).toBe('http://h.test/base?q=1');
    expect(destinationUrl('http://h.test/base?api=1', '', '').href).toBe('http://h.test/base?api=1');
  });
});

describe('unsafePath', () => {
  it.each(['/..', '/a/../b', '/.', '/%2e%2E', '/.%2e/x', '/..%2fx', '/a%2f..%2fb', '/..;/x', '/%2e%2e;x=1/y', '//host', '/a//b', '/\\h', '/%5ch', '/a%5C', '/%252e%252e', '/%25252e%25252e', '/%2525252e%2525252e', '/a%00', '/a%0a', '/a\u0000'])(
    '%s is unsafe',
    (suffix) => expect(unsafePath(suffix)).toEqual(expect.any(String)),
  );

  it.each(['/', '/a', '/a/', '/a/b%20c', '/@host', '/a%2fb', '/.well-known/x', '/a..b/...', '/..a', '/100%25', '/%zz', '/a;b=1'])('%s is safe', (suffix) =>
    expect(unsafePath(suffix)).toBeUndefined(),
  );

  it('is checked by destinationUrl (400), which never leaves the base path', () => {
    expect(() => destinationUrl('http://h.test/base', '/../x', '')).toThrow(HttpError);
    expect(() => destinationUrl('http://h.test/base', 'x', '')).toThrow(/must start with \//);
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
    expect(responseHeaders(destination, false)).toEqual({ 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'x-custom': 'yes' });
  });
});

describe('transformHeaders', () => {
  it('keeps what a transform returned, names a caller could not send included, values as strings', () => {
    expect(transformHeaders({ 'X.Signed': 'sig', 'X-Count': 3, 'X-List': ['a', 'b'], Authorization: 'Bearer x', 'svc-transaction-id': 't1' }, OWNER)).toEqual({
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
  it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json', 'application/problem+json; charset=utf-8', '  application/json'])(
    '%s is JSON',
    (type) => expect(isJsonContentType(type)).toBe(true),
  );

  it.each(['text/plain', 'text/json', 'application/jsonp', 'application/x-www-form-urlencoded', 'multipart/form-data', ''])('%s is not JSON', (type) =>
    expect(isJsonContentType(type)).toBe(false),
  );

  it('no Content-Type is not JSON', () => {
    expect(isJsonContentType(undefined)).toBe(false);
  });
});
