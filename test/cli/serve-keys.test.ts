import { readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runSvc, type CliResult } from '../helpers/cli.js';
import { http, startEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

type Credentials = Record<string, string | undefined>;

async function readCredentials(cwd: string): Promise<Credentials | undefined> {
  try {
    return JSON.parse(await readFile(path.join(cwd, '.svc', 'credentials.json'), 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

/**
 * Runs `svc serve` in-process until its `ready` line (its start done: the keys written), checks
 * `done` on the credentials file it wrote, then runs `meanwhile` against it, then stops it as
 * Ctrl-C would.
 */
async function serveUntil(
  cwd: string,
  args: string[],
  done: (credentials: Credentials) => boolean,
  meanwhile: (credentials: Credentials) => Promise<void> = async () => {},
  env: Record<string, string> = {},
): Promise<CliResult & { credentials: Credentials }> {
  const stop = new AbortController();
  let out = '';
  let isReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (isReady = resolve));
  const onStdout = (chunk: string) => {
    out += chunk;
    if (out.includes('"event":"ready"')) isReady();
  };
  const argv = ['serve', '--port', '0', '--log-format', 'json', ...args];
  const running = runSvc(argv, { cwd, env, signal: stop.signal, onStdout });
  try {
    const ended = await Promise.race([ready.then(() => undefined), running]);
    if (ended) throw new Error(`svc serve ended (exit ${ended.code}) before its ready line: ${ended.stderr}`);
    const credentials = await readCredentials(cwd);
    expect(credentials && done(credentials)).toBe(true);
    await meanwhile(credentials!);
    stop.abort('SIGINT');
    return { ...(await running), credentials: credentials! };
  } finally {
    stop.abort('SIGINT');
  }
}

const lines = (result: CliResult) =>
  result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('svc serve never loses the keys of its tenant', () => {
  test('a first start on a port in use fails having written no tenant; the next start shows and saves the keys', async () => {
    const cwd = await tempDir();
    const other = await startEmulator({ inMemory: true });
    const busy = await runSvc(['serve', '--port', new URL(other.url).port], { cwd });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/^Error: Port \d+ on 127\.0\.0\.1 is already in use/);

    const served = await serveUntil(cwd, [], (credentials) => credentials.management_key !== undefined);
    expect(served.code).toBe(0);
    const ready = lines(served).find((line) => line.event === 'ready');
    expect(ready).toMatchObject({ created: true });
    expect(served.credentials.management_key).toMatch(/^key_local_mgt_/);
    expect(served.credentials.private_key).toMatch(/^key_local_pvt_/);
  });

  test('a store whose keys were lost says how to recover, and --management-key recovers it', async () => {
    const cwd = await tempDir();
    await serveUntil(cwd, [], (credentials) => credentials.management_key !== undefined);
    await unlink(path.join(cwd, '.svc', 'credentials.json'));

    const lost = await serveUntil(cwd, [], (credentials) => credentials.url !== undefined);
    // The warnings of the start come after the line that says where it listens, which is always first.
    expect(lines(lost)[0]).toMatchObject({ event: 'listening' });
    const warnings = lines(lost)
      .filter((line) => line.event === 'warning')
      .map((line) => String(line.message));
    // The emulator names its options; svc serve says them as its flags.
    expect(warnings).toEqual([
      expect.stringMatching(
        /^The key of the bootstrap management Application .* start with --management-key set to a key of your choice/,
      ),
      expect.stringMatching(
        /^The key of the bootstrap private Application .* start with --private-key set to a key of your choice/,
      ),
    ]);

    const key = 'recovered-management-key-1';
    const recovered = await serveUntil(
      cwd,
      ['--management-key', key],
      (credentials) => credentials.management_key === key,
    );
    expect(
      lines(recovered)
        .filter((line) => line.event === 'warning')
        .map((line) => String(line.message)),
    ).toEqual([expect.stringMatching(/bootstrap private Application/)]);
    const running = await startEmulator({ dir: cwd });
    expect((await http(`${running.url}/applications`, 'GET', { key })).status).toBe(200);
  });
});

describe('the JSON log of svc serve', () => {
  test('carries no secret on any line, and an ISO time on every line', async () => {
    const cwd = await tempDir();
    const receiver = await startReceiver(() => 204);
    const secrets: string[] = [];
    const served = await serveUntil(
      cwd,
      [],
      (credentials) => credentials.management_key !== undefined,
      async ({ url, management_key: managementKey, private_key: privateKey }) => {
        const call = (method: string, route: string, key: string | undefined, body?: unknown) =>
          http(`${url}${route}`, method, { key: key ?? null, body });
        secrets.push(
          managementKey!,
          privateKey!,
          (await call('GET', '/_emulator/webhook-secret', managementKey)).body.secret,
        );
        // Requests, an Application made (its key too), a reactor run that logs and delivers a webhook, a failure.
        secrets.push(
          (
            await call('POST', '/applications', managementKey, {
              name: 'made',
              type: 'private',
              permissions: ['token:use'],
            })
          ).body.key,
        );
        const code = "module.exports = async () => { console.log('hello'); return { raw: 1 }; };";
        const reactor = (await call('POST', '/reactors', managementKey, { name: 'talks', code, configuration: {} }))
          .body;
        expect(
          (await call('POST', `/reactors/${reactor.id}/react`, privateKey, { callback_url: receiver.url })).status,
        ).toBe(202);
        await receiver.waitFor(1);
        expect((await call('GET', '/applications', 'key_local_mgt_not_a_key_at_all')).status).toBe(401);
      },
    );
    expect(served.code).toBe(0);
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length > 15)).toBe(true);
    const all = lines(served);
    expect(all.map((line) => line.event)).toEqual(
      expect.arrayContaining([
        'listening',
        'ready',
        'request',
        'console',
        'invocation',
        'webhook',
        'stopping',
        'stopped',
      ]),
    );
    for (const line of served.stdout.trim().split('\n')) {
      for (const secret of secrets) expect(line).not.toContain(secret);
      expect(JSON.parse(line).time, line).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    // The keys are where the log says: in the 0600 credentials file.
    expect(all.find((line) => line.event === 'ready')).toMatchObject({
      generated_keys: ['management', 'private'],
      credentials_file: path.join(cwd, '.svc', 'credentials.json'),
    });
  });

  test('keys given by env are not repeated either', async () => {
    const cwd = await tempDir();
    const env = { SVC_MANAGEMENT_KEY: 'given-management-key-01', SVC_PRIVATE_KEY: 'given-private-key-0001' };
    const served = await serveUntil(
      cwd,
      [],
      (credentials) => credentials.management_key === env.SVC_MANAGEMENT_KEY,
      async () => {},
      env,
    );
    expect(served.code).toBe(0);
    for (const key of Object.values(env)) expect(served.stdout).not.toContain(key);
    expect(lines(served).find((line) => line.event === 'ready')).toMatchObject({ generated_keys: [] });
  });
});
