import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallSecrets } from '../../src/emulator/leaks/secrets.js';
import type { OutboundOrigin } from '../../src/emulator/outbound/types.js';
import { parseCassette, serializeCassette } from '../../src/emulator/recording/cassette.js';
import {
  loadCassettes,
  matchKey,
  Recorder,
  type RecordedExchange,
  redactExchange,
  RecordingSetupError,
} from '../../src/emulator/recording/index.js';
import { tempDir } from '../helpers/temp.js';

const CARD = '4242424242424242';
const SECRET = 'sk_live_abcdef123456';

function origin(secrets?: CallSecrets, configuration?: readonly string[]): OutboundOrigin {
  return { tenantId: 't1', kind: 'proxy', id: 'p1', name: 'charges', traceId: 'trace-1', secrets, configuration };
}

function exchange(body: string, answer = '{"ok":true}'): RecordedExchange {
  return {
    request: {
      method: 'POST',
      path: '/v1/charges',
      query: 'a=1',
      headers: { authorization: 'Bearer sk_test_123456', 'content-type': 'application/json', cookie: 'sid=1' },
      body,
    },
    answer: {
      status: 200,
      headers: { 'set-cookie': ['a=1', 'b=2'], 'content-type': 'application/json' },
      body: answer,
    },
  };
}

describe('redaction by provenance', () => {
  it('a detokenized value and its forms become the token expression; credentials, configuration and cards are masked', () => {
    const secrets = new CallSecrets();
    secrets.add('Jane Q. Public', 'tok_name');
    const encoded = Buffer.from('Jane Q. Public').toString('base64');
    const redacted = redactExchange(
      exchange(
        JSON.stringify({ name: 'Jane Q. Public', b64: encoded, key: SECRET, other: '5555555555554444' }),
        '{"echo":"jane q. public"}',
      ),
      { secrets, configuration: [SECRET] },
    );
    const text = JSON.stringify(redacted);
    expect(text).not.toContain('Jane');
    expect(text).not.toContain(encoded);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('5555555555554444');
    expect(JSON.parse(redacted.request.body!)).toEqual({
      name: '{{ tok_name }}',
      // The base64 needle is the characters made of the value's bits alone: padding bits may remain.
      b64: expect.stringMatching(/^\{\{ tok_name \}\}.{0,3}$/),
      key: '[configuration]',
      other: '[card ****4444]',
    });
    expect(redacted.answer.body).toBe('{"echo":"{{ tok_name }}"}');
    expect(redacted.request.headers).toMatchObject({ authorization: '[masked]', cookie: '[masked]' });
    expect(redacted.answer.headers['set-cookie']).toEqual(['[masked]', '[masked]']);
  });

  it('declared test cards stay; a request matches across token ids, numbered in order of appearance', () => {
    const a = redactExchange(exchange(`{"card":"${CARD}"}`), { allowCards: new Set([CARD]) });
    expect(a.request.body).toBe(`{"card":"${CARD}"}`);
    const first = exchange('{"card":"{{ tok_a }}","again":"{{ tok_a }}","cvc":"{{ tok_b }}"}').request;
    const second = exchange('{"card":"{{ tok_x }}","again":"{{ tok_x }}","cvc":"{{ tok_y }}"}').request;
    const crossed = exchange('{"card":"{{ tok_x }}","again":"{{ tok_y }}","cvc":"{{ tok_y }}"}').request;
    expect(matchKey(first)).toBe(matchKey(second));
    expect(matchKey(first)).not.toBe(matchKey(crossed));
  });
});

describe('cassettes on disk', () => {
  it('are written in a stable order, byte-identical when recorded again, and refused when plaintext of the run remains', async () => {
    const dir = await tempDir();
    const problems: unknown[] = [];
    const record = async (target: string) => {
      const recorder = new Recorder({ dir: target, report: (problem) => problems.push(problem) });
      const secrets = new CallSecrets();
      secrets.add(CARD, 'tok_card');
      recorder.add('https://api.example.com', 2, origin(secrets), exchange(`{"n":2,"card":"${CARD}"}`));
      recorder.add('https://api.example.com', 1, origin(secrets), exchange(`{"n":1,"card":"${CARD}"}`));
      recorder.add('https://api.example.com', 3, origin(secrets), exchange(`{"n":1,"card":"${CARD}"}`, '{"second":1}'));
      return recorder.close();
    };
    expect(await record(dir)).toEqual([]);
    const file = path.join(dir, 'https_api.example.com_443.json');
    const first = await readFile(file, 'utf8');
    expect(first).not.toContain(CARD);
    expect(first).toContain('{{ tok_card }}');
    const cassette = parseCassette(first, file);
    expect(cassette.exchanges.map((item) => item.answer.body)).toEqual(['{"ok":true}', '{"second":1}', '{"ok":true}']);
    expect(await record(dir)).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe(first);

    // A value one call revealed, sent in plaintext by another call (whose set does not hold it):
    // the run-wide check finds it, the file is refused and the previous one kept.
    const recorder = new Recorder({ dir, report: (problem) => problems.push(problem) });
    const revealed = new CallSecrets();
    revealed.add('Jane Q. Public', 'tok_name');
    recorder.add('https://api.example.com', 1, origin(revealed), exchange('{"name":"Jane Q. Public"}'));
    recorder.add('https://api.example.com', 2, origin(), exchange('{"copied":"Jane Q. Public"}'));
    const refused = await recorder.close();
    expect(refused).toEqual([
      {
        file,
        findings: [{ tokenId: 'tok_name', form: 'plain' }],
      },
    ]);
    expect(problems).toEqual(refused);
    expect(await readFile(file, 'utf8')).toBe(first);
    expect(JSON.stringify(refused)).not.toContain('Jane');
  });

  it('a run of large answers: held on disk (sealed), not in memory, and written as the cassette format says', async () => {
    const dir = await tempDir();
    const recorder = new Recorder({ dir });
    const big = (n: number) => `{"n":${n},"pad":"${'x'.repeat(1024 * 1024)}"}`;
    for (let n = 0; n < 12; n++) recorder.add('https://api.example.com', n, origin(), exchange(`{"n":${n}}`, big(n)));
    // Once written, the recorder holds in memory the places of its exchanges, not their bodies.
    expect(await recorder.flush()).toEqual([]);
    expect(recorder.heldBytes).toBe(0);
    expect(await recorder.close()).toEqual([]);
    const file = path.join(dir, 'https_api.example.com_443.json');
    const text = await readFile(file, 'utf8');
    const cassette = parseCassette(text, file);
    // Every exchange, in the order of what they are matched by.
    const numbers = cassette.exchanges.map((item) => JSON.parse(item.answer.body!).n as number);
    expect(numbers.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(text).toBe(serializeCassette(cassette));
    expect((await readdir(dir)).filter((name) => name !== 'https_api.example.com_443.json')).toEqual([]);
  });

  it('hostile cassettes: bad JSON, a wrong version, a wrong shape, a missing folder each get one clear error', async () => {
    const dir = await tempDir();
    const load = async (name: string, text: string) => {
      const folder = path.join(dir, name);
      await mkdir(folder);
      await writeFile(path.join(folder, 'x.json'), text);
      return loadCassettes(folder).then(
        () => 'loaded',
        (error: Error) => (error instanceof RecordingSetupError ? error.message : `not a setup error: ${error}`),
      );
    };
    expect(await load('bad-json', '{"version":1,')).toMatch(/x\.json is not JSON \(/);
    expect(await load('version', '{"version":2,"origin":"https://a.example","exchanges":[]}')).toMatch(
      /x\.json is a cassette of version 2; this svc reads version 1\.$/,
    );
    expect(
      await load('shape', '{"version":1,"origin":"https://a.example","exchanges":[{"request":{},"answer":{}}]}'),
    ).toMatch(/x\.json is not a cassette: exchanges\[0\]\.request\.method is not text\.$/);
    expect(await load('origin', '{"version":1,"origin":"file:///etc","exchanges":[]}')).toMatch(/"origin"/);
    expect(await load('deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toMatch(/not a cassette|not JSON/);
    await expect(loadCassettes(path.join(dir, 'missing'))).rejects.toThrow(
      /missing cannot be read as a folder of cassettes: it does not exist\./,
    );
    expect(await load('fine', '{"version":1,"origin":"https://a.example","exchanges":[]}')).toBe('loaded');
  });
});
