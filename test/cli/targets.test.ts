import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { isLoopback } from '../../src/cli/target/describe.js';
import { resolveTarget } from '../../src/cli/target/resolve.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { plain, svcInPty } from '../helpers/pty.js';
import { tempDir } from '../helpers/temp.js';

/** An address of this machine that is not loopback (a target the CLI must treat as remote), if it has one. */
const remoteAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

/** A URL where nothing listens: an emulator that was started and stopped. */
async function deadUrl(): Promise<string> {
  const dead = await startEmulator({ inMemory: true });
  const url = dead.url;
  await dead.dispose();
  return url;
}

const REACTOR = 'module.exports = async (req) => ({ raw: { ok: true } });\n';

describe("a project folder's own emulator", () => {
  test('beats the current profile; --profile, SVC_PROFILE and SVC_BASE_URL beat the folder', async () => {
    const emu = await startEmulator();
    const env = { HOME: emu.dir, XDG_CONFIG_HOME: path.join(emu.dir, '.config') };
    const dead = await deadUrl();
    const add = await runSvc(
      ['profiles', 'add', 'remote', '--base-url', dead, '--api-key', 'key_x_0000000000000000', '--use'],
      {
        cwd: emu.dir,
      },
    );
    expect(add.code, add.stderr).toBe(0);

    // Before: the current profile won here, and `applications list` went to the dead URL.
    const local = await resolveTarget({}, env, emu.dir);
    expect(local).toMatchObject({ baseUrl: emu.url, source: 'local', managementKey: emu.managementKey });
    expect(local.profile).toBeUndefined();
    const listed = await runSvc('applications list --json', { cwd: emu.dir });
    expect(listed.code, listed.stderr).toBe(0);

    expect(await resolveTarget({ profile: 'remote' }, env, emu.dir)).toMatchObject({
      baseUrl: dead,
      source: 'profile',
    });
    expect(await resolveTarget({}, { ...env, SVC_PROFILE: 'remote' }, emu.dir)).toMatchObject({ baseUrl: dead });
    expect(await resolveTarget({}, { ...env, SVC_BASE_URL: 'http://127.0.0.9:1' }, emu.dir)).toMatchObject({
      baseUrl: 'http://127.0.0.9:1',
      source: 'env',
    });

    // Elsewhere (no .svc/credentials.json) the current profile still applies.
    const elsewhere = await tempDir();
    const away = await resolveTarget({}, { HOME: elsewhere, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME }, elsewhere);
    expect(away).toMatchObject({ baseUrl: dead, source: 'profile', profile: 'remote' });
  });
});

/** As a person at a terminal sees stderr (TERM=dumb: no spinner between the lines). */
const watched = (cwd: string) => ({ cwd, stderrTty: true, env: { TERM: 'dumb' } });

describe('the target of a change is shown with its source, to a person at a terminal', () => {
  test("this folder's svc serve, --base-url, a profile; nothing with --json or into a pipe", async () => {
    const emu = await startEmulator();
    await writeFile(path.join(emu.dir, 'r.js'), REACTOR);
    const human = await runSvc('reactors create --name r1 --code r.js', watched(emu.dir));
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toBe(`target ${emu.url} (this folder's svc serve)\n`);

    const nested = path.join(emu.dir, 'sub');
    await mkdir(nested);
    await writeFile(path.join(nested, 'r.js'), REACTOR);
    const below = await runSvc('reactors create --name r2 --code r.js', watched(nested));
    expect(below.code, below.stderr).toBe(0);
    expect(below.stderr).toBe(`target ${emu.url} (the svc serve of ..)\n`);

    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'r.js'), REACTOR);
    const flag = await runSvc(
      [
        'reactors',
        'create',
        '--name',
        'r3',
        '--code',
        'r.js',
        '--base-url',
        emu.url,
        '--management-key',
        emu.managementKey,
      ],
      watched(cwd),
    );
    expect(flag.code, flag.stderr).toBe(0);
    expect(flag.stderr).toBe(`target ${emu.url} (--base-url)\n`);

    await runSvc(['profiles', 'add', 'emu', '--base-url', emu.url, '--management-key', emu.managementKey, '--use'], {
      cwd,
    });
    const profile = await runSvc('reactors delete r3 --yes', watched(cwd));
    expect(profile.code, profile.stderr).toBe(0);
    expect(profile.stderr).toBe(`target ${emu.url} (profile "emu")\n`);

    const json = await runSvc('reactors create --name r4 --code r.js --json', watched(cwd));
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe('');
    expect(json.json().name).toBe('r4');
    const piped = await runSvc('reactors create --name r5 --code r.js', { cwd });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
  });

  test('svc apply says the target before the plan', async () => {
    const emu = await startEmulator();
    await writeFile(path.join(emu.dir, 'r.js'), REACTOR);
    await writeFile(path.join(emu.dir, 'svc.yaml'), 'reactors:\n  r:\n    code: r.js\n');
    const result = await runSvc('apply', watched(emu.dir));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr.split('\n')[0]).toBe(`target ${emu.url} (this folder's svc serve)`);
  });
});

describe('writes to a target off this machine', () => {
  test('loopback is 127.0.0.0/8, ::1 and localhost', () => {
    for (const url of [
      'http://127.0.0.1:8790',
      'http://127.9.9.9',
      'http://[::1]:80',
      'http://LOCALHOST:1',
      'https://localhost',
    ])
      expect(isLoopback(url), url).toBe(true);
    for (const url of [
      'https://api.example.com',
      'http://192.0.2.2:1',
      'http://128.0.0.1',
      'http://127.0.0.1.example.com',
      'http://[::2]',
    ])
      expect(isLoopback(url), url).toBe(false);
  });

  test.each([
    [
      'applications create --name x --type private',
      /^Error: Creating Application "x" on https:\/\/svc\.invalid \(--base-url\) needs --yes/,
    ],
    ['applications update x --name y', /^Error: Updating Application "x" on .* needs --yes/],
    ['reactors create --name x --code r.js', /^Error: Creating reactor "x" on .* needs --yes/],
    ['reactors update x', /^Error: Updating reactor "x" on .* needs --yes/],
    ['reactors patch x --name y', /^Error: Patching reactor "x" on .* needs --yes/],
    ['proxies create --name x --destination-url http://127.0.0.1:9', /^Error: Creating proxy "x" on .* needs --yes/],
    ['proxies update x', /^Error: Updating proxy "x" on .* needs --yes/],
    ['proxies patch x --name y', /^Error: Patching proxy "x" on .* needs --yes/],
  ])('%s: without a terminal, refused naming --yes before any request; --yes goes ahead', async (line, refusal) => {
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'r.js'), REACTOR);
    const target = '--base-url https://svc.invalid --management-key key_x_0000000000000000';
    expectOneLineError(await runSvc(`${line} ${target}`, { cwd }), 2, refusal);
    const ahead = await runSvc(`${line} ${target} --yes`, { cwd });
    expect(ahead.code).toBe(1);
    expect(ahead.stderr).toMatch(/Cannot reach https:\/\/svc\.invalid/);
  });

  test.skipIf(remoteAddress === undefined)(
    'svc apply to a remote target without --yes is refused; with it, applied',
    async () => {
      const emu = await startEmulator({ host: '0.0.0.0' });
      const remote = emu.url.replace('127.0.0.1', remoteAddress!);
      const cwd = await tempDir();
      await writeFile(path.join(cwd, 'r.js'), REACTOR);
      await writeFile(path.join(cwd, 'svc.yaml'), 'reactors:\n  r:\n    code: r.js\n');
      const keys = ['--base-url', remote, '--management-key', emu.managementKey];
      const refused = await runSvc(['apply', ...keys], { cwd });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`Error: The plan changes ${remote} (--base-url), not this machine; pass --yes`);
      expect((await emu.call('GET', '/reactors')).body.data).toEqual([]);
      const dry = await runSvc(['apply', '--dry-run', ...keys], { cwd });
      expect(dry.code, dry.stderr).toBe(0);
      const applied = await runSvc(['apply', '--yes', ...keys], { cwd });
      expect(applied.code, applied.stderr).toBe(0);
      expect((await emu.call('GET', '/reactors')).body.data).toHaveLength(1);
      // Nothing to change: nothing to ask.
      const again = await runSvc(['apply', ...keys], { cwd });
      expect(again.code, again.stderr).toBe(0);
    },
  );

  test.skipIf(remoteAddress === undefined)(
    'on a terminal, a remote write asks; n changes nothing, y applies',
    async () => {
      const emu = await startEmulator({ host: '0.0.0.0' });
      const remote = emu.url.replace('127.0.0.1', remoteAddress!);
      const cwd = await tempDir();
      await writeFile(path.join(cwd, 'r.js'), REACTOR);
      const args = [
        'reactors',
        'create',
        '--name',
        'asked',
        '--code',
        'r.js',
        '--base-url',
        remote,
        '--management-key',
        emu.managementKey,
      ];
      const no = svcInPty(args, { cwd });
      await no.waitFor(/Creating reactor "asked" on .* \(--base-url\)\? \[y\/N\]/);
      no.type('n\r');
      expect(await no.exited).toBe(1);
      expect(plain(no.output())).toContain('Cancelled; nothing changed.');
      expect((await emu.call('GET', '/reactors')).body.data).toEqual([]);
      const yes = svcInPty(args, { cwd });
      await yes.waitFor('[y/N]');
      yes.type('y\r');
      expect(await yes.exited).toBe(0);
      expect((await emu.call('GET', '/reactors')).body.data).toHaveLength(1);
    },
  );
});

describe('profiles use --none, unset', () => {
  test('clear the current profile; `use none` is refused naming --none', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, '.config', 'svc', 'config.json');
    await runSvc('profiles add remote --base-url https://api.example.com --use', { cwd });
    expectOneLineError(
      await runSvc('profiles use none', { cwd }),
      1,
      'Error: No profile named "none" (known: remote); `svc profiles use --none` clears the current profile.',
    );
    const cleared = await runSvc('profiles use --none', { cwd });
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toBe('No current profile (was remote).\n');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      profiles: { remote: { base_url: 'https://api.example.com' } },
    });
    expect((await resolveTarget({}, { HOME: cwd, XDG_CONFIG_HOME: path.join(cwd, '.config') }, cwd)).source).toBe(
      'local',
    );

    await runSvc('profiles use remote', { cwd });
    const unset = await runSvc('profiles unset --json', { cwd });
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.json()).toEqual({ name: null, current: false, previous: 'remote' });
    expect(JSON.parse(await readFile(file, 'utf8')).current).toBeUndefined();
    expectOneLineError(await runSvc('profiles use', { cwd }), 2, /--none/);
    expectOneLineError(await runSvc('profiles use remote --none', { cwd }), 2, /takes no name/);
  });
});
