// How long a replayed exchange takes through the outbound gateway (issue 29: <= 1 ms each): a
// cassette of 1,000 exchanges, each request matched (redacted, its expressions numbered) and answered.
import { performance } from 'node:perf_hooks';
import { CallSecrets } from '../dist/emulator/leaks/secrets.js';
import { OutboundGateway } from '../dist/emulator/outbound/index.js';
import { Replayer } from '../dist/emulator/recording/index.js';

const ORIGIN = 'https://api.example.com';
const EXCHANGES = 1000;
const cassette = {
  version: 1,
  origin: ORIGIN,
  exchanges: Array.from({ length: EXCHANGES }, (_, n) => ({
    request: {
      method: 'POST',
      path: '/v1/charges',
      query: '',
      headers: {},
      body: JSON.stringify({ amount: n, card: '{{ tok_card }}', name: '{{ tok_name }}' }),
    },
    answer: { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `ch_${n}` }) },
  })),
};
const gateway = new OutboundGateway();
gateway.use(new Replayer([cassette], { dir: 'bench', onMiss: 'fail' }).interceptor);
const secrets = new CallSecrets();
secrets.add('4242424242424242', 'tok_today_card');
secrets.add('Jane Q. Public', 'tok_today_name');
const origin = { tenantId: 't', kind: 'proxy', id: 'p', name: 'charges', traceId: 'x', secrets };
const run = async (n) => {
  const body = JSON.stringify({ amount: n, card: '4242424242424242', name: 'Jane Q. Public' });
  const answer = await gateway.send(
    { url: new URL(`${ORIGIN}/v1/charges`), method: 'POST', headers: {}, body },
    origin,
  );
  for await (const _ of answer.body);
};
for (let n = 0; n < 200; n++) await run(n);
// Replay again: a fresh replayer per round, so that every request finds its answer.
const rounds = 5;
const times = [];
for (let round = 0; round < rounds; round++) {
  const fresh = new OutboundGateway();
  fresh.use(new Replayer([cassette], { dir: 'bench', onMiss: 'fail' }).interceptor);
  const started = performance.now();
  for (let n = 0; n < EXCHANGES; n++) {
    const body = JSON.stringify({ amount: n, card: '4242424242424242', name: 'Jane Q. Public' });
    const answer = await fresh.send(
      { url: new URL(`${ORIGIN}/v1/charges`), method: 'POST', headers: {}, body },
      origin,
    );
    for await (const _ of answer.body);
  }
  times.push((performance.now() - started) / EXCHANGES);
}
times.sort((a, b) => a - b);
process.stdout.write(
  `replay: ${times[Math.floor(rounds / 2)].toFixed(3)} ms per replayed exchange (median of ${rounds} rounds of ${EXCHANGES}; cassette of ${EXCHANGES})\n`,
);
