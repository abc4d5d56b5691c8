// The proxy's transforms are plain functions: these tests call them directly, without a network.
// (`svc invoke proxy payments -X POST -d '{"card": "{{ <token id> }}"}'` runs them for real.)
const assert = require('node:assert/strict');
const { test } = require('node:test');
const requestTransform = require('../transforms/request.js');
const responseTransform = require('../transforms/response.js');

test('the request transform signs the call with the configured key and marks its source', async () => {
  const result = await requestTransform({
    args: { body: { amount: 1250 }, headers: { 'X-Request': '1' }, method: 'POST', path: '/charges', query: '' },
    configuration: { PAYMENTS_API_KEY: 'k-1' },
  });
  assert.deepEqual(result.body, { amount: 1250, source: 'svc-proxy' });
  assert.equal(result.headers.Authorization, 'Bearer k-1');
  assert.equal(result.headers['X-Request'], '1');
});

test('the response transform passes on the names of the fields received, never their values', async () => {
  const result = await responseTransform({
    args: { body: { json: { card: '4242424242424242' }, url: 'x' }, headers: {} },
    configuration: {},
  });
  assert.deepEqual(result.body, { ok: true, received: ['json', 'url'] });
  assert.ok(!JSON.stringify(result).includes('4242'));
});
