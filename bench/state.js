// A large state import (POST /_emulator/state) and a 10,000-token tokenize, each beside a client
// asking /health over and over: the slowest /health while each runs says how long the emulator's
// thread was held (the import and the tokenize are sliced: other requests run between slices).
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { MANAGEMENT_KEY } from './serve-args.js';

/** Runs `task` while /health is asked in a loop; answers the task's time and the slowest /health. */
async function beside(url, task) {
  let done = false;
  let worst = 0;
  const probe = (async () => {
    while (!done) {
      const at = performance.now();
      const answer = await request(`${url}/health`);
      await answer.body.dump();
      worst = Math.max(worst, performance.now() - at);
    }
  })();
  const started = performance.now();
  await task();
  const ms = performance.now() - started;
  done = true;
  await probe;
  return { ms, worst };
}

/** A state document of `tokens` tokens of about 490 bytes each (10,000: 5 MB). */
function stateDocument(tokens) {
  const created_at = new Date().toISOString();
  return JSON.stringify({
    svc_state: 1,
    applications: [],
    reactors: [],
    proxies: [],
    tokens: Array.from({ length: tokens }, (_, i) => ({
      id: randomUUID(),
      type: 'token',
      containers: ['/general/high/'],
      metadata: { n: String(i) },
      expires_at: null,
      created_at,
      data: { note: 'x'.repeat(300), n: i },
    })),
  });
}

export async function measureStateImport({ url, api, tokens }) {
  const idle = await beside(url, () => new Promise((resolve) => setTimeout(resolve, 1000)));
  const body = stateDocument(tokens);
  const imported = await beside(url, () =>
    api(url, 'POST', '/_emulator/state', { key: MANAGEMENT_KEY, body, expect: 200 }),
  );
  const values = Array.from({ length: 10_000 }, (_, i) => `value-${i}`);
  const tokenized = await beside(url, () => api(url, 'POST', '/tokenize', { body: values, expect: 201 }));
  return {
    megabytes: Buffer.byteLength(body) / 1e6,
    idleWorstMs: idle.worst,
    importMs: imported.ms,
    importWorstMs: imported.worst,
    tokenizeMs: tokenized.ms,
    tokenizeWorstMs: tokenized.worst,
  };
}
