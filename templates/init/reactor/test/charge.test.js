// The charge reactor, run as the platform runs it: svc/testing starts the emulator inside this test
// process and applies ../svc.yaml once; each test gets a tenant of its own (its own keys and tokens),
// forked from it in a millisecond. Nothing to start first: `npm install`, then `npm test`.
const assert = require('node:assert/strict');
const path = require('node:path');
const { after, before, test } = require('node:test');

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099, cvc: '123' };

let svc;

before(async () => {
  const { startSvc } = await importSvcTesting();
  svc = await startSvc({ config: path.join(__dirname, '..', 'svc.yaml') });
});

after(async () => {
  await svc?.stop();
});

test('charges a card token: the reactor sees the card, the caller only its last four digits', async () => {
  const t = await svc.tenant();
  try {
    // A card stored as a token in this tenant; the reactor gets its data in place of `{{ id }}`.
    const card = await t.client.tokens.create({ type: 'card', data: CARD });
    const { status, body, logs } = await t.reactors.invoke('charge', { card: `{{ ${card.id} }}`, amount: 1250 });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.raw, { status: 'authorized', amount: 1250, currency: 'EUR', card_last4: '4242' });
    assert.match(body.tokens.receipt, /^[0-9a-f-]{36}$/);
    assert.ok(!JSON.stringify(body).includes(CARD.number), 'the card number never comes back');
    assert.deepEqual(logs, []); // what the reactor's console.log wrote during this call, in order
  } finally {
    await t.dispose();
  }
});

test('refuses an amount that is not a positive whole number (400)', async () => {
  const t = await svc.tenant();
  try {
    const card = await t.client.tokens.create({ type: 'card', data: CARD });
    const { status, body } = await t.reactors.invoke('charge', { card: `{{ ${card.id} }}`, amount: -5 });
    assert.equal(status, 400);
    assert.equal(body.detail, 'Bad Request'); // the platform's shape: the class's text, the message in errors
    assert.match(body.errors.error[0], /amount must be a whole number/);
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
