// The charge reactor against a running emulator: `svc serve` in this folder, then `svc apply`,
// then `npm test`. The URL and keys come from SVC_BASE_URL, SVC_MANAGEMENT_KEY and SVC_API_KEY,
// or else from .svc/credentials.json, which `svc serve` writes here.
const assert = require('node:assert/strict');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { before, test } = require('node:test');

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099, cvc: '123' };

function target() {
  let saved = {};
  try {
    saved = JSON.parse(readFileSync(path.join(__dirname, '..', '.svc', 'credentials.json'), 'utf8'));
  } catch {
    // No emulator started here: the environment must say where to go.
  }
  const env = process.env;
  const url = env.SVC_BASE_URL || saved.url || 'http://127.0.0.1:8790';
  const managementKey = env.SVC_MANAGEMENT_KEY || (url === saved.url ? saved.management_key : undefined);
  const apiKey = env.SVC_API_KEY || (url === saved.url ? saved.private_key : undefined);
  if (!managementKey || !apiKey) {
    throw new Error(`No keys for ${url}: run \`svc serve\` in this folder, or set SVC_MANAGEMENT_KEY and SVC_API_KEY.`);
  }
  return { url, managementKey, apiKey };
}

const svc = target();

/** One API call; answers { status, body }. */
async function call(method, route, key, body) {
  const response = await fetch(svc.url + route, {
    method,
    headers: { 'SVC-API-KEY': key, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

let reactorId;
let cardToken;

before(async () => {
  const found = await call('GET', '/reactors?name=charge', svc.managementKey);
  assert.equal(found.status, 200, JSON.stringify(found.body));
  assert.equal(found.body.data.length, 1, 'no reactor named charge: run `svc apply` first');
  reactorId = found.body.data[0].id;
  const token = await call('POST', '/tokens', svc.apiKey, { type: 'card', data: CARD });
  assert.equal(token.status, 201, JSON.stringify(token.body));
  cardToken = token.body.id;
});

test('charges a card token: the reactor sees the card, the caller only its last four digits', async () => {
  const result = await call('POST', `/reactors/${reactorId}/react`, svc.apiKey, {
    args: { card: `{{ ${cardToken} }}`, amount: 1250 },
  });
  assert.equal(result.status, 200, JSON.stringify(result.body));
  assert.deepEqual(result.body.raw, { status: 'authorized', amount: 1250, currency: 'EUR', card_last4: '4242' });
  assert.match(result.body.tokens.receipt, /^[0-9a-f-]{36}$/);
  assert.ok(!JSON.stringify(result.body).includes(CARD.number), 'the card number never comes back');
});

test('refuses an amount that is not a positive whole number (400)', async () => {
  const result = await call('POST', `/reactors/${reactorId}/react`, svc.apiKey, {
    args: { card: `{{ ${cardToken} }}`, amount: -5 },
  });
  assert.equal(result.status, 400);
  assert.match(JSON.stringify(result.body), /amount must be a whole number/);
});
