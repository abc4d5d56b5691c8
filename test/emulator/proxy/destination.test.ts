import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/emulator/errors.js';
import { destinationUrl, forwardedQuery, pathSuffix, unsafePath } from '../../../src/emulator/proxy/destination.js';

describe('forwardedQuery', () => {
  it('removes svc-proxy-key and keeps the rest exactly as sent, in order', () => {
    const { query, proxyKey } = forwardedQuery('/proxy/x?b=2&svc-proxy-key=proxy_local_abc&a=%20x+y&c=%E2%9C%93&flag');
    expect(query).toBe('?b=2&a=%20x+y&c=%E2%9C%93&flag');
    expect(proxyKey).toBe('proxy_local_abc');
  });

  it('removes every svc-proxy-key parameter (also percent-encoded names) and returns the first one, decoded', () => {
    const { query, proxyKey } = forwardedQuery(
      '/proxy?svc-proxy-key=k%2B1&x=1&svc%2Dproxy%2Dkey=k2&svc-proxy-key=k3&y=2',
    );
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
    expect(forwardedQuery('/proxy?bad=%E0%A4%A&svc-proxy-key=a+b')).toEqual({
      query: '?bad=%E0%A4%A',
      proxyKey: 'a b',
    });
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
    expect(destinationUrl('http://h.test/base?api=1&v=2', '/x', '?q=%20a&r').href).toBe(
      'http://h.test/base/x?api=1&v=2&q=%20a&r',
    );
    expect(destinationUrl('http://h.test/base', '', '?q=1').href).toBe('http://h.test/base?q=1');
    expect(destinationUrl('http://h.test/base?api=1', '', '').href).toBe('http://h.test/base?api=1');
  });
});

describe('unsafePath', () => {
  it.each([
    '/..',
    '/a/../b',
    '/.',
    '/%2e%2E',
    '/.%2e/x',
    '/..%2fx',
    '/a%2f..%2fb',
    '/..;/x',
    '/%2e%2e;x=1/y',
    '//host',
    '/a//b',
    '/\\h',
    '/%5ch',
    '/a%5C',
    '/%252e%252e',
    '/%25252e%25252e',
    '/%2525252e%2525252e',
    '/a%00',
    '/a%0a',
    '/a\u0000',
  ])('%s is unsafe', (suffix) => expect(unsafePath(suffix)).toEqual(expect.any(String)));

  it.each([
    '/',
    '/a',
    '/a/',
    '/a/b%20c',
    '/@host',
    '/a%2fb',
    '/.well-known/x',
    '/a..b/...',
    '/..a',
    '/100%25',
    '/%zz',
    '/a;b=1',
  ])('%s is safe', (suffix) => expect(unsafePath(suffix)).toBeUndefined());

  it('is checked by destinationUrl (400), which never leaves the base path', () => {
    expect(() => destinationUrl('http://h.test/base', '/../x', '')).toThrow(HttpError);
    expect(() => destinationUrl('http://h.test/base', 'x', '')).toThrow(/must start with \//);
  });
});
