// How long a replayed exchange takes through the outbound gateway (issue 29: <= 1 ms each): a
// cassette of 1,000 exchanges, each request matched (redacted, its expressions numbered) and answered.
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
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
const secrets = new CallSecrets();
secrets.add('4242424242424242', 'tok_today_card');
secrets.add('Jane Q. Public', 'tok_today_name');
const origin = { tenantId: 't', kind: 'proxy', id: 'p', name: 'charges', traceId: 'x', secrets };

/** Sends the run's EXCHANGES requests (today's plaintext in each) through `gateway`; ms per exchange. */
async function exchanges(gateway) {
  const started = performance.now();
  for (let n = 0; n < EXCHANGES; n++) {
    const body = JSON.stringify({ amount: n, card: '4242424242424242', name: 'Jane Q. Public' });
    const answer = await gateway.send(
      { url: new URL(`${ORIGIN}/v1/charges`), method: 'POST', headers: {}, body },
      origin,
    );
    for await (const _ of answer.body);
  }
  return (performance.now() - started) / EXCHANGES;
}

/** The floor: the same gateway, an interceptor answering every request at once with one fixed answer. */
function answering() {
  const gateway = new OutboundGateway();
  const body = Buffer.from('{"id":"ch_1"}');
  gateway.use(async () => ({
    status: 200,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
    body: Readable.from([body]),
  }));
  return gateway;
}

function replaying() {
  const gateway = new OutboundGateway();
  gateway.use(new Replayer([cassette], { dir: 'bench', onMiss: 'fail' }).interceptor);
  return gateway;
}

/**
 * A replayed exchange (issue 29: <= 1 ms each) beside the gateway's floor, in rounds that alternate:
 * a fresh replayer each round (a request takes each recorded answer once), the median of `rounds`.
 */
export async function measureReplay(rounds = 5) {
  await exchanges(replaying());
  await exchanges(answering());
  const replay = [];
  const floor = [];
  for (let round = 0; round < rounds; round++) {
    replay.push(await exchanges(replaying()));
    floor.push(await exchanges(answering()));
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { replayMs: median(replay), floorMs: median(floor), exchanges: EXCHANGES, rounds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { replayMs, floorMs, rounds } = await measureReplay();
  process.stdout.write(
    `replay: ${replayMs.toFixed(3)} ms per replayed exchange, ${floorMs.toFixed(3)} ms answered by a plain interceptor (median of ${rounds} rounds of ${EXCHANGES}; cassette of ${EXCHANGES})\n`,
  );
}
