import { describe, expect, it } from 'vitest';
import { camelKey, snakeKey, tokenRequest, tokenResponse } from '../../../src/emulator/runtime/svc-casing.js';

/** The vendor JS client's casing: snake_case out, camelCase back, a token's data and metadata as given. */
describe('svc-casing', () => {
  it.each([
    ['expiresAt', 'expires_at'],
    ['fingerprintExpression', 'fingerprint_expression'],
    ['searchIndexes', 'search_indexes'],
    ['deduplicateToken', 'deduplicate_token'],
    ['expires_at', 'expires_at'],
    ['type', 'type'],
    ['URLPath', 'url_path'],
    ['card4Digits', 'card4_digits'],
  ])('snakeKey(%s) is %s', (key, snake) => {
    expect(snakeKey(key)).toBe(snake);
  });

  it.each([
    ['created_at', 'createdAt'],
    ['page_number', 'pageNumber'],
    ['tenant_id', 'tenantId'],
    ['createdAt', 'createdAt'],
    ['id', 'id'],
  ])('camelKey(%s) is %s', (key, camel) => {
    expect(camelKey(key)).toBe(camel);
  });

  it('renames a request deep, but for data and metadata', () => {
    expect(
      tokenRequest({
        type: 'token',
        data: { firstName: 'Ada', nested: { lastName: 'L' } },
        metadata: { orderId: 'o-1' },
        expiresAt: 'soon',
        mask: { cardNumber: '{{ data.number }}' },
        searchIndexes: ['{{ data.firstName }}'],
      }),
    ).toEqual({
      type: 'token',
      data: { firstName: 'Ada', nested: { lastName: 'L' } },
      metadata: { orderId: 'o-1' },
      expires_at: 'soon',
      mask: { card_number: '{{ data.number }}' },
      search_indexes: ['{{ data.firstName }}'],
    });
  });

  it('renames a token or a page of them back, data and metadata as stored', () => {
    const stored = {
      id: 't',
      tenant_id: 'x',
      data: { first_name: 'Ada' },
      metadata: { order_id: 'o' },
      created_at: 'now',
      expires_at: null,
    };
    expect(tokenResponse(stored)).toEqual({
      id: 't',
      tenantId: 'x',
      data: { first_name: 'Ada' },
      metadata: { order_id: 'o' },
      createdAt: 'now',
      expiresAt: null,
    });
    expect(tokenResponse({ pagination: { total_items: 1, page_number: 1 }, data: [stored] })).toEqual({
      pagination: { totalItems: 1, pageNumber: 1 },
      data: [tokenResponse(stored)],
    });
    expect(tokenResponse(null)).toBeNull();
  });

  it('keeps a __proto__ key a key, never a prototype', () => {
    const sent = tokenRequest(JSON.parse('{"type":"token","data":"x","mask":{"__proto__":{"polluted":true}}}')) as {
      mask: object;
    };
    expect(Object.getPrototypeOf(sent.mask)).toBe(Object.prototype);
    expect(Object.keys(sent.mask)).toEqual(['__proto__']);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});
