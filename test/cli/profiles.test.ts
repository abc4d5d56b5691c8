import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { profilesFilePath } from '../../src/cli/target/profiles-file.js';
import { resolveTarget } from '../../src/cli/target/resolve.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

/** A folder with no credentials, whose config lives in `<cwd>/.config/svc/config.json` (see runSvc). */
async function home() {
  const cwd = await tempDir();
  const file = path.join(cwd, '.config', 'svc', 'config.json');
  const svc = (line: string | string[], env: Record<string, string> = {}) => runSvc(line, { cwd, env });
  // the environment runSvc gives the CLI, for calling resolveTarget directly
  const env = { HOME: cwd, XDG_CONFIG_HOME: path.join(cwd, '.config') };
  return { cwd, file, svc, env };
}

async function readJson(file: string) {
  return JSON.parse(await readFile(file, 'utf8'));
}

/** A URL where nothing listens: an emulator that was started and stopped. */
async function deadUrl(): Promise<string> {
  const dead = await startEmulator({ inMemory: true });
  const url = dead.url;
  await dead.dispose();
  return url;
}

describe('profiles add, list, use, remove', () => {
  test('add writes $XDG_CONFIG_HOME/svc/config.json, owner-only', async () => {
    const { cwd, file, svc } = await home();
    expect(profilesFilePath({ XDG_CONFIG_HOME: path.join(cwd, '.config') })).toBe(file);
    const result = await svc(
      'profiles add staging --base-url https://api.example.com/ --management-key key_mgt_0123456789abcdef --api-key key_pvt_fedcba9876543210',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Saved profile staging; use it with --profile staging/);
    expect(await readJson(file)).toEqual({
      profiles: {
        staging: {
          base_url: 'https://api.example.com',
          management_key: 'key_mgt_0123456789abcdef',
          api_key: 'key_pvt_fedcba9876543210',
        },
      },
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  test('XDG_CONFIG_HOME elsewhere moves the file', async () => {
    const { cwd, file, svc } = await home();
    const xdg = path.join(cwd, 'elsewhere');
    const result = await svc('profiles add p --api-key key_abcdefgh12345678', { XDG_CONFIG_HOME: xdg });
    expect(result.code).toBe(0);
    expect((await readJson(path.join(xdg, 'svc', 'config.json'))).profiles.p).toEqual({
      api_key: 'key_abcdefgh12345678',
    });
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  test('add merges into a profile that exists; --use makes it current', async () => {
    const { file, svc } = await home();
    expect((await svc('profiles add p --base-url http://127.0.0.1:1')).code).toBe(0);
    const second = await svc('profiles add p --management-key key_mgt_aaaaaaaaaaaaaaaa --use --json');
    expect(second.code).toBe(0);
    expect(second.json()).toEqual({ name: 'p', current: true });
    expect(await readJson(file)).toEqual({
      current: 'p',
      profiles: { p: { base_url: 'http://127.0.0.1:1', management_key: 'key_mgt_aaaaaaaaaaaaaaaa' } },
    });
  });

  test('list masks the keys, in human and --json form', async () => {
    const { svc } = await home();
    const mgmt = 'key_local_mgt_SECRETmgmtVALUE0001';
    const api = 'key_local_pvt_SECRETapiVALUE00002';
    await svc([
      'profiles',
      'add',
      'prod',
      '--base-url',
      'https://api.example.com',
      '--management-key',
      mgmt,
      '--api-key',
      api,
      '--use',
    ]);
    await svc('profiles add local --api-key key_local_pvt_OTHERapiVALUE00003');

    const human = await svc('profiles list');
    expect(human.code).toBe(0);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/NAME\s+BASE URL\s+MANAGEMENT KEY\s+API KEY/);
    expect(lines.find((line) => line.includes('prod'))).toMatch(
      /^\*\s+prod\s+https:\/\/api\.example\.com\s+key_local_mgt_…0001\s+key_local_pvt_…0002$/,
    );
    expect(lines.find((line) => /\slocal\s/.test(line))).toMatch(
      /^\s+local\s+\(local emulator\)\s+-\s+key_local_pvt_…0003$/,
    );

    const json = await svc('profiles list --json');
    expect(json.code).toBe(0);
    expect(json.json()).toEqual([
      {
        name: 'prod',
        current: true,
        base_url: 'https://api.example.com',
        management_key: 'key_local_mgt_…0001',
        api_key: 'key_local_pvt_…0002',
      },
      { name: 'local', current: false, base_url: null, management_key: null, api_key: 'key_local_pvt_…0003' },
    ]);
    for (const output of [human.stdout, json.stdout]) {
      expect(output).not.toContain('SECRET');
      expect(output).not.toContain(mgmt);
      expect(output).not.toContain(api);
    }
  });

  test('list with no profiles says how to add one, on stderr', async () => {
    const { svc } = await home();
    const result = await svc('profiles list');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/No profiles; add one with `svc profiles add/);
    const json = await svc('profiles list --json');
    expect(json.json()).toEqual([]);
  });

  test('use switches the current profile; remove deletes it and clears current', async () => {
    const { file, svc } = await home();
    await svc('profiles add a --base-url http://127.0.0.1:1 --use');
    await svc('profiles add b --base-url http://127.0.0.1:2');
    const use = await svc('profiles use b');
    expect(use.code).toBe(0);
    expect(use.stdout).toBe('Now using profile b.\n');
    expect((await readJson(file)).current).toBe('b');

    const removed = await svc('profiles remove b --yes');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe('Removed profile b.\n');
    const config = await readJson(file);
    expect(config.current).toBeUndefined();
    expect(Object.keys(config.profiles)).toEqual(['a']);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  test('use and remove of an unknown profile name the known ones', async () => {
    const { file, svc } = await home();
    await svc('profiles add a --base-url http://127.0.0.1:1');
    const before = await readFile(file, 'utf8');
    expectOneLineError(await svc('profiles use nope'), 1, /^Error: No profile named "nope" \(known: a\)\.$/m);
    expectOneLineError(await svc('profiles rm nope -y'), 1, /^Error: No profile named "nope" \(known: a\)\.$/m);
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  test('add with nothing to hold, or an invalid name, is a usage error', async () => {
    const { file, svc } = await home();
    expectOneLineError(await svc('profiles add empty'), 2, /^Error: Give the profile something to hold/);
    expectOneLineError(
      await svc(['profiles', 'add', 'bad name', '--base-url', 'http://x']),
      2,
      /^Error: A profile name is 1 to 64 letters/,
    );
    expectOneLineError(
      await svc(['profiles', 'add', 'x'.repeat(65), '--base-url', 'http://x']),
      2,
      /^Error: A profile name/,
    );
    expectOneLineError(await svc('profiles add'), 2, /missing required argument 'name'/i);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  test('add rejects a base URL that is not http(s)', async () => {
    const { file, svc } = await home();
    expectOneLineError(await svc('profiles add p --base-url ftp://example.com'), 1, /must use http or https/);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
  });

  test('a corrupt config file is an error naming its path', async () => {
    const { file, svc } = await home();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{ not json');
    for (const line of ['profiles list', 'applications list', 'profiles add p --api-key key_abcdefgh12345678']) {
      const result = await svc(line);
      expectOneLineError(result, 1, /is not a valid svc config/);
      expect(result.stderr).toContain(file);
    }
    expect(await readFile(file, 'utf8')).toBe('{ not json');
  });

  test('a config without a "profiles" object is rejected too', async () => {
    const { file, svc } = await home();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{"current":"x"}');
    const result = await svc('profiles list');
    expectOneLineError(result, 1, /no "profiles" object/);
    expect(result.stderr).toContain(file);
  });
});

describe('a profile supplies the target', () => {
  async function withEmulatorProfile() {
    const emu = await startEmulator();
    const ctx = await home();
    const added = await ctx.svc([
      'profiles',
      'add',
      'emu',
      '--base-url',
      emu.url,
      '--management-key',
      emu.managementKey,
      '--api-key',
      emu.privateKey,
    ]);
    expect(added.code).toBe(0);
    const expected = (await emu.call('GET', '/applications')).body;
    return { emu, expected, ...ctx };
  }

  test('via --profile', async () => {
    const { svc, expected } = await withEmulatorProfile();
    const result = await svc('applications list --json --profile emu');
    expect(result.code).toBe(0);
    expect(result.json()).toEqual(expected);
    // Without it there is no target with keys.
    expectOneLineError(await svc('applications list'), 1, /^Error: No management key/);
  });

  test('via SVC_PROFILE', async () => {
    const { svc, expected } = await withEmulatorProfile();
    const result = await svc('applications list --json', { SVC_PROFILE: 'emu' });
    expect(result.code).toBe(0);
    expect(result.json()).toEqual(expected);
  });

  test('via profiles use', async () => {
    const { svc, expected } = await withEmulatorProfile();
    expect((await svc('profiles use emu')).code).toBe(0);
    const result = await svc('applications list --json');
    expect(result.code).toBe(0);
    expect(result.json()).toEqual(expected);
  });

  test('the profile supplies both keys', async () => {
    const { svc, emu, cwd, env } = await withEmulatorProfile();
    const target = await resolveTarget({ profile: 'emu' }, env, cwd);
    expect(target).toMatchObject({
      baseUrl: emu.url,
      managementKey: emu.managementKey,
      apiKey: emu.privateKey,
      source: 'profile',
      profile: 'emu',
    });
    const management = await svc('applications whoami --json --profile emu');
    expect(management.json().type).toBe('management');
  });

  test("never sends a profile's keys to another base URL", async () => {
    const { svc, cwd, env } = await withEmulatorProfile();
    const target = await resolveTarget({ profile: 'emu', baseUrl: 'http://127.0.0.1:9' }, env, cwd);
    expect(target.managementKey).toBeUndefined();
    expect(target.apiKey).toBeUndefined();
    expectOneLineError(
      await svc('applications list --profile emu --base-url http://127.0.0.1:9'),
      1,
      /^Error: No management key for http:\/\/127\.0\.0\.1:9/,
    );
  });

  test('--profile beats SVC_PROFILE, which beats the current profile', async () => {
    const { svc, expected } = await withEmulatorProfile();
    await svc([
      'profiles',
      'add',
      'dead',
      '--base-url',
      await deadUrl(),
      '--management-key',
      'key_dead_0000000000000000',
      '--use',
    ]);
    expectOneLineError(await svc('applications list'), 1, /^Error: Cannot reach/);
    const env = await svc('applications list --json', { SVC_PROFILE: 'emu' });
    expect(env.code).toBe(0);
    expect(env.json()).toEqual(expected);
    const flag = await svc('applications list --json --profile emu', { SVC_PROFILE: 'dead' });
    expect(flag.code).toBe(0);
    expect(flag.json()).toEqual(expected);
  });

  test('an unknown --profile names the known ones', async () => {
    const { svc } = await withEmulatorProfile();
    const result = await svc('applications list --profile nope');
    expectOneLineError(result, 1, /^Error: No profile named "nope" \(known: emu\)/);
    expectOneLineError(
      await svc('applications list', { SVC_PROFILE: 'ghost' }),
      1,
      /No profile named "ghost" \(known: emu\)/,
    );
  });
});

describe('precedence: flags, then env, then profile', () => {
  test('--base-url beats SVC_BASE_URL, which beats the profile', async () => {
    const emu = await startEmulator();
    const dead = await deadUrl();
    const { svc } = await home();
    await svc(['profiles', 'add', 'p', '--base-url', dead, '--management-key', emu.managementKey, '--use']);

    expectOneLineError(await svc('applications list'), 1, new RegExp(`Cannot reach ${dead.replace(/\./g, '\\.')}`));
    // the profile's key stays with the profile's URL, so the key comes from env here
    const env = await svc('applications list --json', { SVC_BASE_URL: emu.url, SVC_MANAGEMENT_KEY: emu.managementKey });
    expect(env.code).toBe(0);
    expect(env.json().pagination.total_items).toBe(2);
    const flag = await svc(
      ['applications', 'list', '--json', '--base-url', emu.url, '--management-key', emu.managementKey],
      { SVC_BASE_URL: dead },
    );
    expect(flag.code).toBe(0);
    expect(flag.json().pagination.total_items).toBe(2);
    const envLoses = await svc(['applications', 'list', '--base-url', dead], { SVC_BASE_URL: emu.url });
    expectOneLineError(envLoses, 1, /Cannot reach/);
  });

  test('--management-key beats SVC_MANAGEMENT_KEY, which beats the profile', async () => {
    const emu = await startEmulator();
    const { svc } = await home();
    const wrong = 'key_wrong_000000000000000000';
    await svc(['profiles', 'add', 'p', '--base-url', emu.url, '--management-key', wrong, '--use']);

    expectOneLineError(
      await svc('applications list'),
      1,
      /^Error: Unauthenticated \(401\): The API key in SVC-API-KEY is not valid/m,
    );
    const env = await svc('applications list --json', { SVC_MANAGEMENT_KEY: emu.managementKey });
    expect(env.code).toBe(0);
    const flag = await svc(['applications', 'list', '--json', '--management-key', emu.managementKey], {
      SVC_MANAGEMENT_KEY: wrong,
    });
    expect(flag.code).toBe(0);
    const envLoses = await svc(['applications', 'list', '--management-key', wrong], {
      SVC_MANAGEMENT_KEY: emu.managementKey,
    });
    expectOneLineError(envLoses, 1, /\(401\)/);
  });
});

describe('resolveTarget', () => {
  test('one key alone serves for both kinds of work', async () => {
    const cwd = await tempDir();
    const env = { XDG_CONFIG_HOME: path.join(cwd, '.config') };
    const onlyManagement = await resolveTarget({ baseUrl: 'http://h:1/', managementKey: 'K' }, env, cwd);
    const flag = {
      value: 'K',
      source: { from: 'flag', flag: '--management-key', stdin: false },
      givenAs: 'management',
    };
    expect(onlyManagement).toEqual({
      baseUrl: 'http://h:1',
      source: 'flag',
      managementKey: 'K',
      apiKey: 'K',
      keys: { management: flag, api: flag },
      heldKeys: [],
    });
    const onlyApi = await resolveTarget({}, { ...env, SVC_BASE_URL: 'https://e', SVC_API_KEY: 'A' }, cwd);
    const fromEnv = { value: 'A', source: { from: 'env', variable: 'SVC_API_KEY' }, givenAs: 'api' };
    expect(onlyApi).toEqual({
      baseUrl: 'https://e',
      source: 'env',
      managementKey: 'A',
      apiKey: 'A',
      keys: { management: fromEnv, api: fromEnv },
      heldKeys: [],
    });
  });

  test('with nothing at all: the default local URL and no keys', async () => {
    const cwd = await tempDir();
    const target = await resolveTarget({}, { XDG_CONFIG_HOME: path.join(cwd, '.config') }, cwd);
    expect(target).toEqual({ baseUrl: 'http://127.0.0.1:8790', source: 'local', keys: {}, heldKeys: [] });
  });

  test('local: the emulator credentials supply the URL and both keys', async () => {
    const emu = await startEmulator();
    const nested = path.join(emu.dir, 'deep');
    await mkdir(nested);
    const target = await resolveTarget({}, { XDG_CONFIG_HOME: path.join(emu.dir, '.config') }, nested);
    const file = path.join(emu.dir, '.svc', 'credentials.json');
    const management = {
      value: emu.managementKey,
      source: { from: 'credentials', file, field: 'management_key' },
      givenAs: 'management',
    };
    const api = { value: emu.privateKey, source: { from: 'credentials', file, field: 'private_key' }, givenAs: 'api' };
    expect(target).toEqual({
      baseUrl: emu.url,
      source: 'local',
      managementKey: emu.managementKey,
      apiKey: emu.privateKey,
      credentialsFile: file,
      keys: { management, api },
      heldKeys: [management, api],
    });
  });

  test('a profile names itself in the target', async () => {
    const { cwd, svc } = await home();
    await svc('profiles add p --base-url https://p.example --api-key A');
    const target = await resolveTarget({ profile: 'p' }, { XDG_CONFIG_HOME: path.join(cwd, '.config') }, cwd);
    const api = { value: 'A', source: { from: 'profile', profile: 'p', field: 'api_key' }, givenAs: 'api' };
    expect(target).toEqual({
      baseUrl: 'https://p.example',
      source: 'profile',
      profile: 'p',
      managementKey: 'A',
      apiKey: 'A',
      keys: { management: api, api },
      heldKeys: [api],
    });
  });
});
