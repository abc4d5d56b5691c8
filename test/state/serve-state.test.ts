import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { openDocument } from '../../src/cli/commands/state/file.js';
import { readCredentials } from '../../src/cli/target/credentials-file.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { http } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/state-v1.json', import.meta.url));
const PASSPHRASE = 'serve passphrase';

describe('svc serve --import and --export-on-exit', () => {
  test('imports into the bootstrap tenant once started, and exports on Ctrl-C, saying where', async () => {
    const cwd = await tempDir();
    const stop = new AbortController();
    const env = { SVC_STATE_PASSPHRASE: PASSPHRASE };
    const running = runSvc(
      ['serve', '--port', '0', '--log-format', 'json', '--import', FIXTURE, '--export-on-exit', 'out.json'],
      { cwd, env, signal: stop.signal },
    );
    try {
      const credentials = await eventually(async () => {
        const saved = await readCredentials(path.join(cwd, '.svc', 'credentials.json'));
        expect(saved?.url).toBeDefined();
        return saved!;
      }, 15_000);
      const key = credentials.management_key!;
      await eventually(async () => {
        const reactor = await http(`${credentials.url}/reactors/22222222-2222-4222-8222-222222222222`, 'GET', { key });
        expect(reactor.status).toBe(200);
      }, 15_000);
      await http(`${credentials.url}/tokens`, 'POST', {
        key: credentials.private_key!,
        body: { id: 'added-while-serving', type: 'token', data: 'hello', containers: ['/x/'] },
      });
    } finally {
      stop.abort('SIGINT');
    }
    const result = await running;
    expect(result.stderr).toContain(`Imported ${FIXTURE}: 4 added, 0 changed, 0 unchanged.`);
    expect(result.stderr).toContain(`State exported to ${path.join(cwd, 'out.json')}.`);
    const doc = await openDocument(
      JSON.parse(await readFile(path.join(cwd, 'out.json'), 'utf8')),
      async () => PASSPHRASE,
    );
    expect(doc.tokens.map((token) => token.id).sort()).toEqual([
      '44444444-4444-4444-8444-444444444444',
      'added-while-serving',
    ]);
    expect(doc.reactors.map((reactor) => reactor.name)).toEqual(['greet']);
  });

  test('a bad --import file is one line, and nothing starts; --export-on-exit needs a passphrase', async () => {
    const cwd = await tempDir();
    expectOneLineError(
      await runSvc(['serve', '--port', '0', '--in-memory', '--import', 'missing.json'], { cwd }),
      1,
      /^Error: Cannot read missing\.json: no such file\.$/,
    );
    expectOneLineError(
      await runSvc(['serve', '--port', '0', '--in-memory', '--export-on-exit', 'out.json'], { cwd }),
      1,
      /--export-on-exit seals the state with SVC_STATE_PASSPHRASE: set it\./,
    );
  });
});
