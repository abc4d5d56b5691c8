// The payments proxy, run as the platform runs it: svc/testing starts the emulator inside this test
// process and applies ../svc.yaml once; each test gets a tenant of its own. A call goes through the
// whole pipeline: `{{ token }}` detokenized, the request transform, the destination, the response
// transform (both in the sandbox). The destination is mocked inside the emulator: nothing leaves
// this machine. Nothing to start first: `npm install`, then `npm test`.
const assert = require('node:assert/strict');
const path = require('node:path');
const { after, before, test } = require('node:test');

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099, cvc: '123' };
/** svc.yaml's destination_url: http://127.0.0.1:8791/anything (destination.js, mocked here). */
const DESTINATION = 'http://127.0.0.1:8791';

let svc;

before(async () => {
  const { startSvc } = await importSvcTesting();
  svc = await startSvc({ config: path.join(__dirname, '..', 'svc.yaml') });
});

after(async () => {
  await svc?.stop();
});

/** Answers as destination.js (and httpbin's /anything) does: what it received, echoed as JSON. */
function echo(request) {
  return {
    status: 200,
    body: {
      method: request.method,
      url: request.url,
      headers: request.headers,
      data: request.body,
      json: JSON.parse(request.body),
    },
  };
}

test('the destination gets the card detokenized and the call signed; the caller never sees the card', async () => {
  const t = await svc.tenant();
  try {
    t.destinations.intercept(DESTINATION).on('POST', '/anything').reply(echo);
    const card = await t.client.tokens.create({ type: 'card', data: CARD });
    const { status, body } = await t.proxies.invoke('payments', {
      method: 'POST',
      body: { amount: 1250, card: `{{ ${card.id} }}` },
    });
    assert.equal(status, 200, JSON.stringify(body));

    // What the destination received: the token's data in place of `{{ id }}`, and the request
    // transform's work (the Authorization header from svc.yaml's configuration, the source field).
    const [sent] = t.destinations.calls();
    assert.equal(sent.url, `${DESTINATION}/anything`);
    assert.equal(sent.headers.authorization, 'Bearer test-key-not-a-secret');
    assert.deepEqual(JSON.parse(sent.body), { amount: 1250, card: CARD, source: 'svc-proxy' });

    // What the caller got: the response transform's answer, the names of the fields only.
    assert.deepEqual(body, { ok: true, received: ['data', 'headers', 'json', 'method', 'url'] });
    assert.ok(!JSON.stringify(body).includes(CARD.number), 'the card number never comes back');
  } finally {
    await t.dispose();
  }
});

test('a refusal of the destination reaches the caller as it was: the response transform runs on 2xx answers only', async () => {
  const t = await svc.tenant();
  try {
    t.destinations.intercept(DESTINATION).on('POST', '/anything').reply(402, { error: 'card_declined' });
    const { status, body } = await t.proxies.invoke('payments', { method: 'POST', body: { amount: 1250 } });
    assert.equal(status, 402);
    assert.deepEqual(body, { error: 'card_declined' }); // as on the platform: not transformed
  } finally {
    await t.dispose();
  }
});

/** svc/testing is an ES module: import() loads it from CommonJS (Node >= 20.18). */
async function importSvcTesting() {
  try {
    return await import('svc/testing');
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !/'svc'/.test(error.message)) throw error;
    const missing = new Error(
      'svc/testing not found: run `npm install` (devDependencies.svc says where svc comes from).',
    );
    missing.stack = missing.message; // one line, no stack: the fix is all there is to say
    throw missing;
  }
}
