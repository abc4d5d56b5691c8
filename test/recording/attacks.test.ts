/**
 * Plaintext that tried to reach a cassette another way: a compressed body, another encoder's
 * escapes and percent-encoding, a value one call revealed and another sent encoded; and file names.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CallSecrets } from '../../src/emulator/leaks/secrets.js';
import type { OutboundOrigin, OutboundRequest } from '../../src/emulator/outbound/types.js';
import { capturedOf, recordedAnswer, recordedRequest } from '../../src/emulator/recording/capture.js';
import {
  cassetteFileName,
  loadCassettes,
  openRecording,
  parseCassette,
  Recorder,
  type RecordingProblem,
  type RecordedExchange,
  Replayer,
} from '../../src/emulator/recording/index.js';
import { tempDir } from '../helpers/temp.js';

const NAME = 'José Müller/12';
const EMAIL = "o'brien@example.de";

function origin(secrets?: CallSecrets): OutboundOrigin {
  return { tenantId: 't1', kind: 'reactor', id: 'r1', name: 'pay', traceId: 'trace-1', secrets };
}

function callSecrets(): CallSecrets {
  const secrets = new CallSecrets();
  secrets.add(NAME, 'tok_name');
  secrets.add(EMAIL, 'tok_email');
  return secrets;
}

function exchangeOf(
  request: OutboundRequest,
  answer: { headers: Record<string, string>; body: Buffer | string },
): RecordedExchange {
  const sent = request.body instanceof Readable ? undefined : request.body;
  return {
    request: recordedRequest(request, capturedOf(sent)),
    answer: recordedAnswer({ status: 200, headers: answer.headers, body: Readable.from([]) }, capturedOf(answer.body)),
  };
}

/** Records the exchanges (each with its own origin) and reads back what reached the disk. */
async function recordAll(items: [RecordedExchange, OutboundOrigin][]) {
  const dir = await tempDir();
  const recorder = new Recorder({ dir });
  for (const [at, [exchange, from]] of items.entries()) recorder.add('https://api.example.com', at + 1, from, exchange);
  const problems = await recorder.close();
  const files = (await readdir(dir)).filter((file) => !file.startsWith('.'));
  const text = files.length === 0 ? '' : await readFile(path.join(dir, files[0]!), 'utf8');
  return { dir, problems, text };
}

/** What a cassette's texts say once every encoding is undone (its JSON, percent-encoding, compression). */
function plainOf(text: string): string {
  const views: string[] = [text];
  for (const { request, answer } of parseCassette(text, 'x').exchanges)
    for (const part of [
      request.path,
      request.query,
      request.body,
      answer.body,
      request.bodyBase64,
      answer.bodyBase64,
    ]) {
      if (part === undefined) continue;
      views.push(part, Buffer.from(part, 'base64').toString('latin1'));
      try {
        views.push(JSON.stringify(JSON.parse(part)), ...Object.values(JSON.parse(part)).map(String));
      } catch {}
      try {
        views.push(decodeURIComponent(part.replaceAll('+', ' ')));
      } catch {}
    }
  return views.join('\n');
}

function expectNoPlaintext(text: string): void {
  const plain = plainOf(text);
  for (const needle of ['Müller', 'ller/12', 'brien']) expect(plain).not.toContain(needle);
}

describe('a compressed body', () => {
  it('is recorded decompressed and redacted (gzip, deflate, br), and replays as such', async () => {
    const json = JSON.stringify({ name: NAME });
    for (const [coding, compress] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const) {
      const body = compress(json);
      const url = new URL('https://api.example.com/v1/people');
      const exchange = exchangeOf(
        { url, method: 'POST', headers: { 'Content-Encoding': coding }, body },
        { headers: { 'content-encoding': coding, 'content-type': 'application/json' }, body },
      );
      const { problems, text } = await recordAll([[exchange, origin(callSecrets())]]);
      expect(problems).toEqual([]);
      expectNoPlaintext(text);
      const cassette = parseCassette(text, 'x');
      const [recorded] = cassette.exchanges;
      expect(recorded?.request.body).toBe('{"name":"{{ tok_name }}"}');
      expect(recorded?.answer.headers['content-encoding']).toBeUndefined();

      // Replayed: the same compressed request matches; the answer comes decompressed, without its coding.
      const replayer = new Replayer([cassette], { dir: 'x', onMiss: 'fail' });
      const answer = await replayer.interceptor(
        { url, method: 'POST', headers: { 'content-encoding': coding }, body },
        origin(callSecrets()),
        () => Promise.reject(new Error('not replayed')),
      );
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(Buffer.concat(await answer.body.toArray()).toString()).toBe('{"name":"{{ tok_name }}"}');
    }
  });

  it('that cannot be decoded (unknown coding, broken bytes) is omitted, never kept as bytes', async () => {
    const body = gzipSync(JSON.stringify({ name: NAME }));
    for (const coding of ['zstd', 'gzip, gzip']) {
      const exchange = exchangeOf(
        { url: new URL('https://api.example.com/v1'), method: 'POST', headers: { 'content-encoding': coding }, body },
        { headers: { 'content-encoding': 'gzip' }, body: body.subarray(0, 12) },
      );
      const { text } = await recordAll([[exchange, origin(callSecrets())]]);
      expectNoPlaintext(text);
      const [recorded] = parseCassette(text, 'x').exchanges;
      expect(recorded?.request.bodyOmitted).toMatch(/could not decode/);
      expect(recorded?.answer.bodyOmitted).toMatch(/could not decode/);
    }
  });
});

describe("another encoder's escapes", () => {
  it('JSON \\u escapes and \\/ in an answer, a query encoded otherwise, a form body: redacted', async () => {
    const url = new URL(
      `https://api.example.com/users/${encodeURIComponent(NAME).replaceAll('%C3%', '%c3%')}` +
        `?q=${EMAIL}&r=${encodeURIComponent(NAME).replaceAll('%20', '+')}&keep=a%27b`,
    );
    const exchange = exchangeOf(
      {
        url,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=${EMAIL.replace('@', '%40')}&name=${encodeURIComponent(NAME).replaceAll('%20', '+')}`,
      },
      {
        headers: { 'content-type': 'application/json' },
        // As Python's json.dumps and PHP's json_encode write it.
        body: '{"name": "Jos\\u00e9 M\\u00fcller\\/12", "email": "o\\u0027brien@example.de", "n": 1}',
      },
    );
    const { problems, text } = await recordAll([[exchange, origin(callSecrets())]]);
    expect(problems).toEqual([]);
    expectNoPlaintext(text);
    const [recorded] = parseCassette(text, 'x').exchanges;
    expect(recorded?.request.path).toBe('/users/{{ tok_name }}');
    expect(recorded?.request.query).toBe('q={{ tok_email }}&r={{ tok_name }}&keep=a%27b');
    expect(recorded?.request.body).toBe('email={{ tok_email }}&name={{ tok_name }}');
    expect(JSON.parse(recorded?.answer.body ?? '')).toEqual({ name: '{{ tok_name }}', email: '{{ tok_email }}', n: 1 });
  });

  it('a value one call revealed, sent encoded by another call: the check after writing refuses the file', async () => {
    const revealing = exchangeOf(
      { url: new URL('https://api.example.com/a'), method: 'GET', headers: {}, body: undefined },
      { headers: {}, body: '' },
    );
    const copying = exchangeOf(
      { url: new URL(`https://api.example.com/b?email=${EMAIL}`), method: 'GET', headers: {}, body: undefined },
      { headers: { 'content-type': 'application/json' }, body: '{"name":"Jos\\u00e9 M\\u00fcller\\/12"}' },
    );
    const { problems, text } = await recordAll([
      [revealing, origin(callSecrets())],
      [copying, origin()],
    ]);
    expect(text).toBe('');
    expect(problems).toHaveLength(1);
    expect(problems[0]?.findings).toEqual(
      expect.arrayContaining([
        { tokenId: 'tok_email', form: 'plain' },
        { tokenId: 'tok_name', form: 'plain' },
      ]),
    );
  });
});

describe('cassette file names', () => {
  it('two long hosts sharing their first 200 characters, and hosts whose characters were replaced, get files of their own', () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(30)}`;
    const names = [
      `https://${long}x.example`,
      `https://${long}y.example`,
      'http://[::1]:8080',
      'http://__1_:8080',
      'https://api.example.com',
    ].map(cassetteFileName);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(name).toMatch(/^[a-z0-9._-]+\.json$/);
      expect(Buffer.byteLength(name)).toBeLessThan(255);
    }
    expect(names[4]).toBe('https_api.example.com_443.json');
  });
});

describe('a hand-edited cassette', () => {
  it("answers with the replayer's own framing, whatever case or framing headers it holds", async () => {
    const text = JSON.stringify({
      version: 1,
      origin: 'https://api.example.com',
      exchanges: [
        {
          request: { method: 'GET', path: '/v1', query: '', headers: {} },
          answer: {
            status: 200,
            headers: {
              'Content-Length': '999',
              'Transfer-Encoding': 'chunked',
              Connection: 'close',
              ['__proto__']: 'x',
              'X-Kept': 'yes',
            },
            body: 'hello',
          },
        },
      ],
    });
    const replayer = new Replayer([parseCassette(text, 'x')], { dir: 'x', onMiss: 'fail' });
    const answer = await replayer.interceptor(
      { url: new URL('https://api.example.com/v1'), method: 'GET', headers: {}, body: undefined },
      origin(),
      () => Promise.reject(new Error('not replayed')),
    );
    expect(answer.headers).toEqual({ 'content-length': '5', 'x-kept': 'yes' });
    expect(Object.getPrototypeOf(answer.headers)).toBe(Object.prototype);
    expect(Buffer.concat(await answer.body.toArray()).toString()).toBe('hello');
  });
});

describe('bounds', () => {
  it('a cassette never grows past what a replay reads, nor a run past its bound in memory', async () => {
    const dir = await tempDir();
    const problems: RecordingProblem[] = [];
    const limit = 64 * 1024;
    const recorder = new Recorder({ dir, maxCassetteBytes: limit, report: (problem) => problems.push(problem) });
    const big = 'x'.repeat(10 * 1024);
    const exchange = (n: number): RecordedExchange => ({
      request: { method: 'POST', path: `/v1/${n}`, query: '', headers: {}, body: big },
      answer: { status: 200, headers: {}, body: big },
    });
    for (let n = 0; n < 20; n++) recorder.add('https://api.example.com', n, origin(), exchange(n));
    // Other origins: the run as a whole is bounded too (four cassettes' worth).
    for (let host = 0; host < 8; host++)
      for (let n = 0; n < 4; n++) recorder.add(`https://h${host}.example.com`, 100 + n, origin(), exchange(n));
    expect(await recorder.close()).toEqual([]);
    const sizes = await Promise.all(
      (await readdir(dir)).map(async (file) => (await readFile(path.join(dir, file))).length),
    );
    for (const size of sizes) expect(size).toBeLessThanOrEqual(limit);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(4 * limit);
    const cassette = parseCassette(await readFile(path.join(dir, 'https_api.example.com_443.json'), 'utf8'), 'x');
    expect(cassette.exchanges.length).toBeGreaterThan(0);
    expect(problems.map((problem) => problem.error)).toContainEqual(
      expect.stringMatching(/later ones are not recorded/),
    );
  });
});

describe('what a replay matches', () => {
  const cassette = (query: string, body: string) =>
    parseCassette(
      JSON.stringify({
        version: 1,
        origin: 'https://api.example.com',
        exchanges: [
          {
            request: { method: 'POST', path: '/v1', query, headers: {}, body },
            answer: { status: 201, headers: {}, body: 'matched' },
          },
        ],
      }),
      'x',
    );
  const ask = async (recorded: ReturnType<typeof cassette>, query: string, body: string) => {
    const replayer = new Replayer([recorded], { dir: 'x', onMiss: 'fail' });
    const secrets = new CallSecrets();
    secrets.add(NAME, 'tok_today');
    return replayer
      .interceptor(
        { url: new URL(`https://api.example.com/v1?${query}`), method: 'POST', headers: {}, body },
        origin(secrets),
        () => Promise.reject(new Error('not replayed')),
      )
      .then(
        (answer) => answer.status,
        (error: Error & { code?: string }) => error.code,
      );
  };

  it('query parameters in another order and JSON with other spacing or key order match; values in another order do not', async () => {
    const recorded = cassette('a=1&b=2&tag=x&tag=y', '{"amount":1,"name":"{{ tok_then }}"}');
    expect(await ask(recorded, 'b=2&a=1&tag=x&tag=y', `{ "name": "${NAME}",\n  "amount": 1 }`)).toBe(201);
    expect(await ask(recorded, 'a=1&b=2&tag=y&tag=x', `{"amount":1,"name":"${NAME}"}`)).toBe('ERR_SVC_REPLAY_MISS');
    expect(await ask(recorded, 'a=1&b=2&tag=x&tag=y', `{"amount":2,"name":"${NAME}"}`)).toBe('ERR_SVC_REPLAY_MISS');
    // A body that is not JSON is matched as it is.
    const text = cassette('', 'amount=1&name=x');
    expect(await ask(text, '', 'amount=1&name=x')).toBe(201);
    expect(await ask(text, '', 'name=x&amount=1')).toBe('ERR_SVC_REPLAY_MISS');
  });
});

describe('a refused cassette', () => {
  it('is refused before any of it is written: its plaintext never reaches the disk, even staged', async () => {
    const dir = await tempDir();
    // Anything written to the staged file's place fails: a refusal must come before it.
    await mkdir(path.join(dir, '.https_api.example.com_443.json.check'));
    const recorder = new Recorder({ dir });
    const revealed = callSecrets();
    const exchange = (body: string): RecordedExchange => ({
      request: { method: 'POST', path: '/v1', query: '', headers: {}, body },
      answer: { status: 200, headers: {}, body: '' },
    });
    recorder.add('https://api.example.com', 1, origin(revealed), exchange(`{"name":"${NAME}"}`));
    recorder.add('https://api.example.com', 2, origin(), exchange(`{"copied":"${NAME}"}`));
    expect(await recorder.close()).toEqual([
      { file: path.join(dir, 'https_api.example.com_443.json'), findings: [{ tokenId: 'tok_name', form: 'plain' }] },
    ]);
  });
});

describe('credentials no token or configuration explains', () => {
  it('headers and query or form parameters named as credentials are masked (a key written in the code)', async () => {
    const exchange = exchangeOf(
      {
        url: new URL('https://api.example.com/v1?api_key=hardcoded_key_1&access_token=hardcoded_tok_2&page=2'),
        method: 'POST',
        headers: {
          'X-Stripe-Key': 'hardcoded_key_3',
          'Idempotency-Key': 'a-new-uuid-every-run',
          'X-Access-Token': 'hardcoded_tok_4',
          'Stripe-Signature': 't=1,v1=hardcoded_sig_5',
          'X-Client-Secret': 'hardcoded_sec_6',
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: 'user=jane&password=hardcoded_pw_7&client_secret=hardcoded_sec_8',
      },
      { headers: { 'x-session-id': 'hardcoded_ses_9', 'content-type': 'text/plain' }, body: 'ok' },
    );
    const { problems, text } = await recordAll([[exchange, origin()]]);
    expect(problems).toEqual([]);
    expect(text).not.toMatch(/hardcoded|a-new-uuid/);
    const [recorded] = parseCassette(text, 'x').exchanges;
    expect(recorded?.request.query).toBe('api_key=[masked]&access_token=[masked]&page=2');
    expect(recorded?.request.body).toBe('user=jane&password=[masked]&client_secret=[masked]');
    expect(recorded?.request.headers).toMatchObject({
      accept: 'application/json',
      'idempotency-key': '[masked]',
      'x-stripe-key': '[masked]',
    });
  });
});

describe('a cassette edited by hand with a card number in it', () => {
  it('replays as it is, and recording what a replay missed beside it writes the card masked (not a refusal)', async () => {
    const dir = await tempDir();
    const text = JSON.stringify({
      version: 1,
      origin: 'https://api.example.com',
      exchanges: [
        {
          request: { method: 'GET', path: '/v1/card', query: '', headers: {} },
          answer: { status: 200, headers: {}, body: '{"number":"4000056655665556"}' },
        },
      ],
    });
    const cassette = parseCassette(text, 'x');
    const problems: RecordingProblem[] = [];
    const recorder = new Recorder({ dir, report: (problem) => problems.push(problem) });
    recorder.seed(cassette);
    const replayer = new Replayer([cassette], { dir, onMiss: 'record', recorder });
    const replayed = await replayer.interceptor(
      { url: new URL('https://api.example.com/v1/card'), method: 'GET', headers: {}, body: undefined },
      origin(),
      () => Promise.reject(new Error('not replayed')),
    );
    expect(Buffer.concat(await replayed.body.toArray()).toString()).toBe('{"number":"4000056655665556"}');
    recorder.add('https://api.example.com', 1, origin(), {
      request: { method: 'GET', path: '/v1/missed', query: '', headers: {} },
      answer: { status: 200, headers: {}, body: 'new' },
    });
    expect(await recorder.close()).toEqual([]);
    expect(problems).toEqual([]);
    const written = await readFile(path.join(dir, 'https_api.example.com_443.json'), 'utf8');
    expect(written).not.toContain('4000056655665556');
    expect(written).toContain('[card ****5556]');
    expect(written).toContain('/v1/missed');
  });
});

it('a hand-written request with a card number or an api_key still matches the request as sent', async () => {
  const cassette = parseCassette(
    JSON.stringify({
      version: 1,
      origin: 'https://api.example.com',
      exchanges: [
        {
          request: {
            method: 'POST',
            path: '/v1',
            query: 'api_key=abc123',
            headers: {},
            body: '{"card":"4000056655665556"}',
          },
          answer: { status: 201, headers: {}, body: 'ok' },
        },
      ],
    }),
    'x',
  );
  const replayer = new Replayer([cassette], { dir: 'x', onMiss: 'fail' });
  const answer = await replayer.interceptor(
    {
      url: new URL('https://api.example.com/v1?api_key=abc123'),
      method: 'POST',
      headers: {},
      body: '{"card":"4000056655665556"}',
    },
    origin(),
    () => Promise.reject(new Error('not replayed')),
  );
  expect(answer.status).toBe(201);
});

describe('a folder of cassettes', () => {
  it('with a .json that is a device, a pipe or a folder: one clear error, never a hang', async () => {
    const { symlink } = await import('node:fs/promises');
    const { execFileSync } = await import('node:child_process');
    for (const make of [
      (file: string) => symlink('/dev/zero', file),
      async (file: string) => void execFileSync('mkfifo', [file]),
      (file: string) => mkdir(file),
    ]) {
      const dir = await tempDir();
      await make(path.join(dir, 'x.json'));
      await expect(loadCassettes(dir)).rejects.toThrow(/x\.json is (not a file|a link to a file out of the folder)/);
    }
  });

  it('given as a file: one clear error for record and for replay', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'plain.txt');
    await writeFile(file, 'x');
    const use = () => () => {};
    await expect(openRecording({ record: { dir: file }, use })).rejects.toThrow(
      `${file} cannot be written to: it is not a folder.`,
    );
    await expect(openRecording({ replay: { dir: file }, use })).rejects.toThrow(
      `${file} cannot be read as a folder of cassettes: it is not a folder.`,
    );
  });
});

it('a JSON body nested deeper than a stack, with an escaped value in it: recorded without the value, no throw', async () => {
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  const body = `{"name":"Jos\\u00e9 M\\u00fcller\\/12","deep":${deep}}`;
  // Deeper than 64 levels too (where a walk of the parsed value stops).
  const nested = `${'['.repeat(100)}"Jos\\u00e9 M\\u00fcller\\/12"${']'.repeat(100)}`;
  const exchange: RecordedExchange = {
    request: { method: 'POST', path: '/v1', query: '', headers: {}, body },
    answer: { status: 200, headers: {}, body: nested },
  };
  const { problems, text } = await recordAll([[exchange, origin(callSecrets())]]);
  expect(problems).toEqual([]);
  expectNoPlaintext(text);
  // Matching it does not throw either.
  const replayer = new Replayer([parseCassette(text, 'x')], { dir: 'x', onMiss: 'fail' });
  const answer = await replayer.interceptor(
    { url: new URL('https://api.example.com/v1'), method: 'POST', headers: {}, body },
    origin(callSecrets()),
    () => Promise.reject(new Error('not replayed')),
  );
  expect(answer.status).toBe(200);
});

it('two recordings of one folder at once (two tenants of one test run): the second is refused, none lost', async () => {
  const dir = await tempDir();
  const use = () => () => {};
  const first = await openRecording({ record: { dir }, use });
  await expect(openRecording({ record: { dir: `${dir}/.` }, use })).rejects.toThrow(
    `${dir}/. is being recorded to by another recording: give each its own folder, or stop the other first.`,
  );
  await expect(openRecording({ replay: { dir, onMiss: 'record' }, use })).rejects.toThrow(/another recording/);
  // Replaying it is fine (nothing written).
  const replay = await openRecording({ replay: { dir }, use });
  await replay.close();
  await first.close();
  const again = await openRecording({ record: { dir }, use });
  await again.close();
});

it('a card security code (shorter than any value looked for) is masked by its name in JSON, a query and a form', async () => {
  const exchange = exchangeOf(
    {
      url: new URL('https://api.example.com/v1/cards?cvc=321&page=2'),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"card":{"cvc":"123","CVV2": 456,"security_code" : "789","exp_month":12}}',
    },
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'cvv=654&ok=1' },
  );
  const { problems, text } = await recordAll([[exchange, origin()]]);
  expect(problems).toEqual([]);
  const [recorded] = parseCassette(text, 'x').exchanges;
  expect(recorded?.request.query).toBe('cvc=[masked]&page=2');
  expect(JSON.parse(recorded?.request.body ?? '')).toEqual({
    card: { cvc: '[masked]', CVV2: '[masked]', security_code: '[masked]', exp_month: 12 },
  });
  expect(recorded?.answer.body).toBe('cvv=[masked]&ok=1');
});

describe('a cassette that is not what it seems', () => {
  const exchange = (answer: Record<string, unknown>) =>
    JSON.stringify({
      version: 1,
      origin: 'https://api.example.com',
      exchanges: [{ request: { method: 'GET', path: '/v1', query: '', headers: {} }, answer }],
    });

  it("a link to a file out of the folder, or a file that is not JSON: refused without a character of the file's", async () => {
    const { symlink } = await import('node:fs/promises');
    const outside = await tempDir();
    const secret = path.join(outside, 'master.key');
    await writeFile(secret, 'S3CRETKEYMATERIAL0123456789');
    const links = [secret, '/proc/self/environ'];
    for (const target of links) {
      const dir = await tempDir();
      await symlink(target, path.join(dir, 'x.json'));
      const error = await loadCassettes(dir).then(
        () => undefined,
        (failure: Error) => failure,
      );
      expect(error?.message, target).toMatch(/x\.json is a link to a file out of the folder: not read\./);
    }
    const dir = await tempDir();
    await writeFile(path.join(dir, 'x.json'), 'S3CRETKEYMATERIAL0123456789');
    const error = await loadCassettes(dir).catch((failure: Error) => failure);
    expect((error as Error).message).toMatch(/x\.json is not JSON/);
    expect((error as Error).message).not.toMatch(/S3C/);
    // A link inside the folder to a cassette of the folder is read as that cassette.
    const inside = await tempDir();
    await writeFile(path.join(inside, 'real.json'), exchange({ status: 200, headers: {}, body: 'ok' }));
    await symlink(path.join(inside, 'real.json'), path.join(inside, 'x.json'));
    expect(await loadCassettes(inside)).toHaveLength(2);
  });

  it('an answer with an interim status (100, 101, 103) or a header value HTTP cannot carry: refused at load, naming the exchange', () => {
    for (const status of [100, 101, 103, 199])
      expect(() => parseCassette(exchange({ status, headers: {}, body: '' }), 'c.json')).toThrow(
        `c.json is not a cassette: exchanges[0].answer.status ${status} is an interim status, not an answer.`,
      );
    for (const value of ['a\r\nx-injected: 1', 'a\nb', 'a\u0000b', 'euro \u20ac', ['ok', 'a\rb']])
      expect(() => parseCassette(exchange({ status: 200, headers: { 'x-h': value }, body: '' }), 'c.json')).toThrow(
        /c\.json is not a cassette: exchanges\[0\]\.answer\.headers\["x-h"\] holds a character HTTP cannot carry/,
      );
    expect(() => parseCassette(exchange({ status: 200, headers: { 'x h': 'v' }, body: '' }), 'c.json')).toThrow(
      /exchanges\[0\]\.answer\.headers\["x h"\] is not a header name/,
    );
    // Latin-1 and tabs are what HTTP carries: kept.
    expect(
      parseCassette(exchange({ status: 200, headers: { 'x-h': 'caf\u00e9\tok' }, body: '' }), 'c.json'),
    ).toBeTruthy();
  });
});

describe('what a crash leaves in a folder of cassettes', () => {
  it('its staged .<cassette>.json.check files are removed when a recording opens there (cassettes and other files stay)', async () => {
    for (const open of [
      (dir: string) => openRecording({ record: { dir }, use: () => () => {} }),
      (dir: string) => openRecording({ replay: { dir, onMiss: 'record' }, use: () => () => {} }),
    ]) {
      const dir = await tempDir();
      await writeFile(path.join(dir, '.https_api.example.com_443.json.check'), '{"half": ');
      await writeFile(path.join(dir, '.notes'), 'mine');
      await writeFile(path.join(dir, 'readme.txt'), 'mine');
      const opened = await open(dir);
      expect((await readdir(dir)).sort()).toEqual(['.notes', 'readme.txt']);
      await opened.close();
    }
  });
});
