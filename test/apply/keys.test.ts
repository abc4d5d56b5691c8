import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Application } from '../../src/api/types.js';
import { executePlan, type KeyKeeper } from '../../src/apply/execute.js';
import { KeysFile, lostKeys } from '../../src/apply/keys.js';
import { loadConfig } from '../../src/apply/load.js';
import { plan } from '../../src/apply/plan.js';
import { observe } from '../../src/apply/session.js';
import { emptyTargetState } from '../../src/apply/types.js';
import { ApiClient } from '../../src/client/index.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const TARGET = { url: 'http://127.0.0.1:4000', tenantId: 't1' };
const app = (name: string, id: string): Application =>
  ({ id, name, type: 'private', permissions: ['token:use'], rules: [], created_at: '' }) as unknown as Application;

describe('lostKeys: what the journal of an interrupted apply says', () => {
  const journal = (name: string, existing: string[] = []) => ({
    [name]: { started: '2030-01-01T00:00:00Z', existing },
  });

  test('an Application the journaled create made, whose key was never saved, is lost: named with the command', () => {
    const { lost, dropped } = lostKeys(journal('backend'), {}, [app('backend', 'id-1')]);
    expect(dropped).toEqual([]);
    expect(lost).toEqual([expect.objectContaining({ name: 'backend', id: 'id-1', type: 'private' })]);
    expect(lost[0]!.message).toContain('`svc applications regenerate backend` issues a new one');
  });

  test('a create killed before its request reached the server made nothing: the entry is dropped', () => {
    expect(lostKeys(journal('backend'), {}, [])).toEqual({ lost: [], dropped: ['backend'] });
  });

  test('an Application that existed before the create, or whose key is saved, is not lost', () => {
    expect(lostKeys(journal('backend', ['id-0']), {}, [app('backend', 'id-0')]).lost).toEqual([]);
    const saved = { backend: { id: 'id-1', type: 'private', key: 'key_x' } };
    expect(lostKeys(journal('backend'), saved, [app('backend', 'id-1')]).lost).toEqual([]);
  });

  test('a name the shell would split is quoted; a name two Applications share is given as the id', () => {
    const odd = lostKeys(journal("it's mine"), {}, [app("it's mine", 'id-1')]).lost[0]!;
    expect(odd.message).toContain(`\`svc applications regenerate 'it'\\''s mine'\``);
    const twice = lostKeys(journal('backend', ['id-0']), {}, [app('backend', 'id-0'), app('backend', 'id-1')]);
    expect(twice.lost[0]!.message).toContain('`svc applications regenerate id-1`');
  });
});

describe('KeysFile', () => {
  test('a key is saved and its journal entry closed in one write (0600); a lost one is recorded as such', async () => {
    const dir = await tempDir();
    const keys = KeysFile.beside(dir);
    await keys.creating(TARGET, 'a', []);
    await keys.creating(TARGET, 'b', []);
    expect(Object.keys(await keys.pending(TARGET))).toEqual(['a', 'b']);
    await keys.created(TARGET, { name: 'a', id: 'id-a', type: 'private', key: 'key_a' });
    expect(Object.keys(await keys.pending(TARGET))).toEqual(['b']);
    expect((await stat(keys.file)).mode & 0o777).toBe(0o600);
    await keys.settle(TARGET, [{ name: 'b', id: 'id-b', type: 'private', message: 'lost: regenerate' }], []);
    expect(await keys.read(TARGET)).toEqual({
      a: { id: 'id-a', type: 'private', key: 'key_a' },
      b: { id: 'id-b', type: 'private', lost: 'lost: regenerate' },
    });
    // The journal is gone from the file once no create is under way.
    expect(JSON.parse(await readFile(keys.file, 'utf8'))).not.toHaveProperty('pending');
  });

  test('an Application named __proto__, constructor or toString keeps its key', async () => {
    const keys = KeysFile.beside(await tempDir());
    for (const name of ['__proto__', 'constructor', 'toString']) {
      await keys.creating(TARGET, name, []);
      await keys.created(TARGET, { name, id: `id-${name}`, type: 'private', key: `key_${name}` });
    }
    const saved = await keys.read(TARGET);
    expect(Object.keys(saved).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(await keys.pending(TARGET)).toEqual({});
  });
});

describe('executePlan with a key that cannot be saved', () => {
  test('the create fails naming the command that issues a new key, and no further change starts', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    await mkdir(path.join(cwd, 'reactors'));
    await writeFile(path.join(cwd, 'reactors', 'r.js'), 'module.exports = async () => ({ raw: 1 });\n');
    await writeFile(
      path.join(cwd, 'svc.yaml'),
      'applications:\n  backend:\n    type: private\n    permissions: [token:use]\n' +
        // The reactor does not need the Application: it is skipped only because the apply stopped.
        'reactors:\n  r:\n    code: reactors/r.js\n',
    );
    const client = new ApiClient({ baseUrl: emu.url, managementKey: emu.managementKey });
    const desired = await loadConfig('svc.yaml', { cwd, env: {} });
    const made = plan({ desired, state: emptyTargetState(), actual: await observe(client) });
    const keeper: KeyKeeper = {
      creating: async () => {},
      refused: async () => {},
      created: async () => {
        throw new Error('ENOSPC: no space left on device');
      },
    };
    const execution = await executePlan(made, desired, { client, keys: keeper, concurrency: 1 });
    const [created, reactor] = execution.outcomes;
    expect(created).toMatchObject({ address: 'applications.backend', status: 'failed' });
    expect(created!.error).toMatch(/^created \(.+\), but its key could not be saved in \.svc\/keys\.json: ENOSPC/);
    expect(created!.error).toContain('`svc applications regenerate ');
    expect(reactor).toMatchObject({ address: 'reactors.r', status: 'skipped' });
    expect(reactor!.error).toBe('not started: the key of applications.backend could not be saved');
    expect((await emu.call('GET', '/reactors')).body.data).toEqual([]);
  });
});
