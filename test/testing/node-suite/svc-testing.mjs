// svc/testing under node:test, against the built package (`svc/testing` resolves to dist/ through
// package.json "exports"): run by test/testing/node-test.test.ts, or `node --test` on this file.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startSvc } from 'svc/testing';

const fixture = fileURLToPath(new URL('../fixture/', import.meta.url));
let svc;

before(async () => {
  svc = await startSvc({
    config: {
      reactors: {
        counter: { code: 'reactors/counter.js' },
        echo: { code: 'reactors/echo.js', configuration: { GREETING: 'hi' } },
      },
    },
    projectDir: fixture,
  });
});

after(async () => {
  await svc.stop();
});

test('a reactor answers with its console lines', async () => {
  const t = await svc.tenant();
  try {
    const result = await t.reactors.invoke('echo', { card: 'x' });
    assert.equal(result.status, 200);
    assert.deepEqual(result.body, { raw: { args: { card: 'x' }, greeting: 'hi' } });
    assert.deepEqual(result.logs, ['echo {"card":"x"}']);
  } finally {
    await t.dispose();
  }
});

test('each test has module state of its own', async () => {
  const first = await svc.tenant();
  const second = await svc.tenant();
  assert.deepEqual((await first.reactors.invoke('counter')).body, { raw: { count: 1 } });
  assert.deepEqual((await first.reactors.invoke('counter')).body, { raw: { count: 2 } });
  assert.deepEqual((await second.reactors.invoke('counter')).body, { raw: { count: 1 } });
  await first.dispose();
  await second.dispose();
});
