import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { runSvc as runCli } from '../../src/cli/main.js';
import { expectOneLineError, runSvc, splitArgs, type CliResult } from '../helpers/cli.js';
import { http, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const CHARGE =
  'module.exports = async (req) => ({ raw: { charged: req.args.amount, mode: req.configuration.MODE } });\n';
const CHARGE_V2 =
  'module.exports = async (req) => ({ raw: { charged: req.args.amount * 2, mode: req.configuration.MODE } });\n';
const SECRET = 'sk_live_51_never_print_this';

const SVC_YAML = `applications:
  backend:
    type: private
    permissions: [token:use, token:read]
reactors:
  charge:
    code: reactors/charge.js
    application: backend
    configuration:
      STRIPE_KEY: \${env:STRIPE_KEY}
      MODE: test
proxies:
  stripe:
    destination_url: https://api.stripe.com
    application: backend
`;

/**
 * A real emulator and a project folder; the CLI runs against it as against a remote server: a base
 * URL and a management key, no credentials file.
 */
async function setup(emu?: TestEmulator, options: { empty?: boolean } = {}) {
  const server = emu ?? (await startEmulator({ inMemory: true }));
  const cwd = await tempDir();
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(cwd, file)), { recursive: true });
    await writeFile(path.join(cwd, file), text);
  };
  if (!options.empty) {
    await write('svc.yaml', SVC_YAML);
    await write('reactors/charge.js', CHARGE);
  }
  const svc = (
    line: string,
    run: { env?: Record<string, string>; server?: TestEmulator; signal?: AbortSignal } = {},
  ): Promise<CliResult> => {
    const target = run.server ?? server;
    return runSvc([...splitArgs(line), '--base-url', target.url, '--management-key', target.managementKey], {
      cwd,
      env: { STRIPE_KEY: SECRET, ...run.env },
      ...(run.signal && { signal: run.signal }),
    });
  };
  const list = async (kind: string) => (await server.call('GET', `/${kind}?size=100`)).body.data as any[];
  return { emu: server, cwd, write, svc, list, read: (file: string) => readFile(path.join(cwd, file), 'utf8') };
}

describe('svc apply', () => {
  test('creates what svc.yaml names, then a second apply changes nothing and says so', async () => {
    const { svc, list, emu } = await setup();
    const first = await svc('apply');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('  + create applications.backend');
    expect(first.stdout).toContain('      + configuration.STRIPE_KEY (set)');
    expect(first.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete.');
    expect(first.stdout).toMatch(/reactors\.charge created \(\d+ ms\)/);
    expect(first.stdout).toContain('Apply complete: 3 created.');
    expect(first.stdout + first.stderr).not.toContain(SECRET);

    const [reactor] = await list('reactors');
    const backend = (await list('applications')).find((app) => app.name === 'backend');
    expect(reactor).toMatchObject({
      name: 'charge',
      code: CHARGE,
      configuration: { STRIPE_KEY: SECRET, MODE: 'test' },
      application: { id: backend.id },
    });
    const [proxy] = await list('proxies');
    expect(proxy).toMatchObject({ name: 'stripe', application_id: backend.id, require_auth: true });
    const invoked = await emu.call('POST', `/reactors/${reactor.id}/react`, {
      key: emu.privateKey,
      body: { args: { amount: 5 } },
    });
    expect(invoked.body).toEqual({ raw: { charged: 5, mode: 'test' } });

    const second = await svc('apply --detailed-exitcode');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('No changes: the target matches the configuration.');
    expect(await list('reactors')).toHaveLength(1);
  });

  test('--detailed-exitcode: 2 for changes (pending or applied), 0 for none, 1 for an error', async () => {
    const { svc, list, write } = await setup();
    expect((await svc('apply --dry-run --detailed-exitcode')).code).toBe(2);
    expect(await list('reactors')).toEqual([]);
    expect((await svc('apply --dry-run')).code).toBe(0);
    expect((await svc('apply --detailed-exitcode')).code).toBe(2);
    expect((await svc('apply --detailed-exitcode')).code).toBe(0);
    expect((await svc('apply --dry-run --detailed-exitcode')).code).toBe(0);
    await write('svc.yaml', `${SVC_YAML}    bogus: 1\n`);
    expectOneLineError(
      await svc('apply --detailed-exitcode'),
      1,
      /^Error: svc\.yaml:16:5 proxies\.stripe\.bogus: unknown key "bogus"/,
    );
  });

  test('an update is a field-level plan and a PATCH; a rename keeps the id', async () => {
    const { svc, list, write } = await setup();
    await svc('apply');
    const before = (await list('reactors'))[0];
    await write('reactors/charge.js', CHARGE_V2);
    await write(
      'svc.yaml',
      SVC_YAML.replace('  charge:\n', '  pay:\n    renamed_from: charge\n').replace('MODE: test', 'MODE: live'),
    );
    const result = await svc('apply', { env: { STRIPE_KEY: 'sk_rotated' } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('  -> rename reactors.pay (from charge)');
    expect(result.stdout).toContain('      ~ code (reactors/charge.js)');
    expect(result.stdout).toContain(
      '          -module.exports = async (req) => ({ raw: { charged: req.args.amount, mode: req.configuration.MODE } });',
    );
    expect(result.stdout).toContain('      ~ configuration.MODE (changed)');
    expect(result.stdout).toContain('      ~ configuration.STRIPE_KEY (changed)');
    expect(result.stdout).not.toMatch(/sk_rotated|live/);
    const after = await list('reactors');
    expect(after).toEqual([
      expect.objectContaining({
        id: before.id,
        name: 'pay',
        code: CHARGE_V2,
        configuration: { STRIPE_KEY: 'sk_rotated', MODE: 'live' },
      }),
    ]);
    expect((await svc('apply --detailed-exitcode', { env: { STRIPE_KEY: 'sk_rotated' } })).code).toBe(0);
  });

  test('--json prints one document { schema_version, plan, result } with no key and no configuration value', async () => {
    const { svc, read, cwd } = await setup();
    const result = await svc('apply --json --show-secrets');
    expect(result.code, result.stderr).toBe(0);
    const document = result.json();
    expect(Object.keys(document)).toEqual(['schema_version', 'plan', 'result']);
    // 2 since its fields are snake_case, as the API's (a deliberate change of --json: issue 31).
    expect(document.schema_version).toBe(2);
    expect(document.plan.summary).toEqual({ create: 3, update: 0, rename: 0, adopt: 0, delete: 0 });
    expect(document.plan.changes[1]).toMatchObject({
      address: 'reactors.charge',
      depends_on: ['applications.backend'],
    });
    const keysOf = (value: unknown): string[] =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value).flatMap(([key, inner]) => (key === 'diffs' ? [key] : [key, ...keysOf(inner)]))
        : Array.isArray(value)
          ? value.flatMap(keysOf)
          : [];
    expect(keysOf(document).filter((key) => /[A-Z]/.test(key))).toEqual([]);
    expect(document.plan.changes.map((change: any) => change.address)).toEqual([
      'applications.backend',
      'reactors.charge',
      'proxies.stripe',
    ]);
    expect(document.result).toMatchObject({
      status: 'applied',
      new_keys: 1,
      keys_file: path.join(cwd, '.svc', 'keys.json'),
    });
    expect(document.result.changes.every((outcome: any) => outcome.status === 'applied')).toBe(true);

    const keys = JSON.parse(await read('.svc/keys.json'));
    const entry = Object.values<any>(Object.values<any>(keys.targets)[0])[0].backend;
    expect(entry.key).toMatch(/^key_local_pvt_/);
    expect(result.stdout).not.toContain(entry.key);
    expect(result.stdout).not.toContain(SECRET);
    const file = path.join(cwd, '.svc', 'keys.json');
    expect(result.stderr).toBe(`--show-secrets prints nothing with --json; the keys are in ${file}.\n`);
    expect(await read('.svc/state.json')).not.toContain(SECRET);
    expect((await stat(path.join(cwd, '.svc', 'keys.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(cwd, '.svc', 'state.json'))).mode & 0o777).toBe(0o600);
    expect((await svc('apply --json')).json().result).toMatchObject({ status: 'no-changes', changes: [] });
  });

  test('the key of a new Application works, is printed only with --show-secrets, and a dry run has result null', async () => {
    const { svc, read, emu } = await setup();
    expect((await svc('apply --dry-run --json')).json().result).toBeNull();
    const shown = await svc('apply --show-secrets');
    const key = /applications\.backend key: (key_local_pvt_\w+)/.exec(shown.stdout)?.[1];
    expect(key).toBeDefined();
    expect(await read('.svc/keys.json')).toContain(key);
    expect((await http(`${emu.url}/tokens`, 'GET', { key: key! })).status).toBe(200);

    const { svc: other } = await setup();
    const hidden = await other('apply');
    expect(hidden.stdout).not.toMatch(/key_local_pvt_/);
    expect(hidden.stderr).toBe(
      'The key of applications.backend is in .svc/keys.json (0600); --show-secrets prints it.\n',
    );
  });

  test('--prune deletes only what svc recorded; without a terminal it needs --yes', async () => {
    const { svc, list, write, emu } = await setup();
    await svc('apply');
    const theirs = await emu.call('POST', '/reactors', { body: { name: 'not-svcs', code: CHARGE, configuration: {} } });
    expect(theirs.status).toBe(201);
    await write('svc.yaml', SVC_YAML.slice(0, SVC_YAML.indexOf('proxies:')));

    const kept = await svc('apply');
    expect(kept.stdout).toContain('No changes');
    expect(kept.stdout).toContain('proxies.stripe is no longer in svc.yaml; svc leaves it be (--prune deletes it).');

    const refused = await svc('apply --prune');
    expect(refused.code).toBe(2);
    expect(refused.stdout).toContain('  - delete proxies.stripe');
    expect(refused.stderr).toBe(
      'Error: The plan deletes 1 resource (proxies.stripe); pass --yes to apply it without a terminal.\n',
    );
    expect(await list('proxies')).toHaveLength(1);

    const pruned = await svc('apply --prune --yes');
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toContain('proxies.stripe deleted');
    expect(await list('proxies')).toEqual([]);
    expect((await list('reactors')).map((reactor) => reactor.name).sort()).toEqual(['charge', 'not-svcs']);
  });

  test('--target applies one resource (and the Application it needs)', async () => {
    const { svc, list } = await setup();
    const result = await svc('apply --target reactors.charge');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Plan: 2 to create, 0 to update, 0 to delete.');
    expect((await list('reactors')).map((reactor) => reactor.name)).toEqual(['charge']);
    expect(await list('proxies')).toEqual([]);
    expectOneLineError(
      await svc('apply --target nonsense'),
      2,
      'Error: --target takes kind.name (applications, reactors or proxies), e.g. reactors.charge, not "nonsense".',
    );
  });

  test('a resource svc did not create is adopted by its exact name, not made twice', async () => {
    const { svc, list, emu } = await setup();
    const made = await emu.call('POST', '/reactors', {
      body: { name: 'charge', code: CHARGE, configuration: { STRIPE_KEY: SECRET, MODE: 'test' } },
    });
    const result = await svc('apply --target reactors.charge');
    expect(result.stdout).toContain(
      '  ~ update reactors.charge (found on the target by its name; svc manages it from now on)',
    );
    expect(result.stdout).toContain('      ~ application: (none) -> backend');
    expect((await list('reactors')).map((reactor) => reactor.id)).toEqual([made.body.id]);
  });

  test('a change the server refuses fails alone: exit 1, the others applied, the next apply retries it', async () => {
    const { svc, list, write } = await setup();
    await write('reactors/charge.js', 'module.exports = 42;\n');
    const result = await svc('apply --detailed-exitcode');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/reactors\.charge create failed: .*\(422\)/);
    expect(result.stdout).toContain('applications.backend created');
    expect(result.stderr).toContain('Error: Apply failed: 1 of 3 changes did not apply; the others did.\n');
    expect((await list('proxies')).map((proxy) => proxy.name)).toEqual(['stripe']);
    await write('reactors/charge.js', CHARGE);
    const retried = await svc('apply');
    expect(retried.stdout).toContain('Plan: 1 to create, 0 to update, 0 to delete.');
    expect(retried.code).toBe(0);
  });
});

describe('svc apply with a saved plan', () => {
  test('--out saves the plan and applies nothing; `svc apply plan.json` applies exactly it', async () => {
    const { svc, list, read } = await setup();
    const saved = await svc('apply --out plan.json --detailed-exitcode');
    expect(saved.code).toBe(2);
    expect(saved.stderr).toContain('Plan saved to plan.json; apply it with `svc apply plan.json`.');
    expect(await list('reactors')).toEqual([]);
    const file = await read('plan.json');
    expect(file).not.toContain(SECRET);
    expect(JSON.parse(file)).toMatchObject({ svc_plan: 1, config: 'svc.yaml', options: { prune: false } });
    expect(JSON.parse(file).plan.changes[1]).toMatchObject({ depends_on: ['applications.backend'] });
    expect(file).not.toContain('dependsOn');

    const applied = await svc('apply plan.json');
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Apply complete: 3 created.');
    expect(await list('reactors')).toHaveLength(1);
    // The target has changed since: the same plan is refused.
    expectOneLineError(
      await svc('apply plan.json'),
      1,
      'Error: The target changed since the plan plan.json was made; make a new plan (svc apply --out plan.json).',
    );
  });

  test('a plan file of an svc before snake_case (`dependsOn`) is still applied', async () => {
    const { svc, list, read, write } = await setup();
    await svc('apply --out plan.json');
    const old = (await read('plan.json')).replaceAll('"depends_on"', '"dependsOn"');
    expect(old).toContain('"dependsOn": [\n');
    await write('plan.json', old);
    const applied = await svc('apply plan.json');
    expect(applied.code, applied.stderr).toBe(0);
    expect(await list('reactors')).toHaveLength(1);
  });

  test('a plan is refused when svc.yaml or a code file changed since it was made', async () => {
    const { svc, list, write } = await setup();
    await svc('apply --out plan.json');
    await write('reactors/charge.js', CHARGE_V2);
    expectOneLineError(
      await svc('apply plan.json'),
      1,
      'Error: reactors/charge.js changed since the plan plan.json was made; make a new plan (svc apply --out plan.json).',
    );
    await write('reactors/charge.js', CHARGE);
    await write('svc.yaml', SVC_YAML.replace('MODE: test', 'MODE: live'));
    expectOneLineError(await svc('apply plan.json'), 1, /^Error: svc\.yaml changed since the plan plan\.json was made/);
    expect(await list('reactors')).toEqual([]);
    expectOneLineError(
      await svc('apply svc.yaml'),
      1,
      /^Error: svc\.yaml is not a plan made by `svc apply --out` .*; to apply a config, give it with -f\.$/,
    );
    expectOneLineError(
      await svc('apply plan.json --prune'),
      2,
      'Error: A saved plan is applied as it was made; --prune cannot change it.',
    );
  });
});

describe('svc apply against several targets', () => {
  test('state is kept per base URL and tenant: each target gets its own resources, each apply is idempotent', async () => {
    const { svc, cwd, read } = await setup();
    const other = await startEmulator({ inMemory: true });
    expect((await svc('apply')).code).toBe(0);
    const second = await svc('apply', { server: other });
    expect(second.stdout).toContain('Plan: 3 to create, 0 to update, 0 to delete.');
    expect((await svc('apply --detailed-exitcode', { server: other })).code).toBe(0);
    expect((await svc('apply --detailed-exitcode')).code).toBe(0);
    expect(Object.keys(JSON.parse(await read('.svc/state.json')).targets).sort()).toEqual(
      [other.url, await setupUrl(cwd, read)].sort(),
    );
  });
});

/** The first target's URL, read back from the state (the one that is not the other emulator's). */
async function setupUrl(_cwd: string, read: (file: string) => Promise<string>): Promise<string> {
  const urls = Object.keys(JSON.parse(await read('.svc/state.json')).targets);
  return urls[0]!;
}

describe('svc import', () => {
  test('writes svc.yaml, code and .env files from the target; the next apply plans no change', async () => {
    const source = await setup();
    await source.svc('apply');
    const hooks = await source.emu.call('POST', '/proxies', {
      body: {
        name: 'hooks',
        destination_url: 'https://hooks.example.com/in',
        request_transform: { code: CHARGE },
        configuration: { 'my-key': 'it\'s "quoted"\nand multi-line' },
        require_auth: false,
      },
    });
    expect(hooks.status, hooks.text).toBe(201);
    const reader = await source.emu.call('POST', '/applications', {
      body: {
        name: 'reader',
        type: 'public',
        rules: [
          {
            description: 'cost: ${not env}',
            priority: 1,
            container: '/pci/',
            transform: 'mask',
            permissions: ['token:create'],
          },
        ],
      },
    });
    expect(reader.status, reader.text).toBe(201);

    const { svc, read, cwd } = await setup(source.emu, { empty: true });
    const imported = await svc('import');
    expect(imported.code, imported.stderr).toBe(0);
    // svc serve's own private Application is left out now (issue 31: --prune must never delete it).
    expect(imported.stdout).toContain('Imported 2 Applications, 1 reactor and 2 proxies into svc.yaml.');
    expect(imported.stderr).toMatch(
      /^Warning: applications\..+ is not imported: it is the Application whose key svc is using\.\n/,
    );
    const yaml = await read('svc.yaml');
    expect(yaml).toContain('description: "cost: $${not env}"');
    // Neither quote fits this value, so the writer took backticks (and the parser reads it back exactly).
    expect(await read('proxies/hooks.env')).toBe('my-key=`it\'s "quoted"\nand multi-line`\n');
    expect(yaml).toContain('# yaml-language-server: $schema=');
    expect(yaml).toContain('configuration: reactors/charge.env');
    expect(yaml).not.toContain(SECRET);
    expect(await read('reactors/charge.js')).toBe(CHARGE);
    expect((await stat(path.join(cwd, 'reactors', 'charge.env'))).mode & 0o777).toBe(0o600);

    const planned = await svc('apply --detailed-exitcode');
    expect(planned.stdout).toContain('No changes');
    expect(planned.code).toBe(0);
    expectOneLineError(
      await svc('import'),
      1,
      /^Error: .*svc\.yaml.* already exist; pass --force to overwrite, or --out another file\.$/,
    );
    expect((await svc('import --force')).code).toBe(0);
  });
});

describe('svc apply at a terminal', () => {
  /** The CLI with stdin and stdout as terminals, and `answer` typed at the prompt. */
  async function atTerminal(
    emu: TestEmulator,
    cwd: string,
    argv: string[],
    answer: string,
    env: Record<string, string> = {},
  ) {
    let stdout = '';
    let stderr = '';
    const stdin = Object.assign(Readable.from([answer]), { isTTY: true });
    const code = await runCli([...argv, '--base-url', emu.url, '--management-key', emu.managementKey], {
      stdout: { write: (chunk: string) => (stdout += chunk), isTTY: true, columns: 120 },
      stderr: { write: (chunk: string) => (stderr += chunk), isTTY: true },
      stdin: stdin as never,
      env: { HOME: cwd, STRIPE_KEY: SECRET, ...env },
      cwd,
      signal: new AbortController().signal,
    });
    return { code, stdout, stderr };
  }

  test('deletions are asked about: "yes" applies them, anything else applies nothing', async () => {
    const { svc, list, write, emu, cwd } = await setup();
    await svc('apply');
    await write('svc.yaml', SVC_YAML.slice(0, SVC_YAML.indexOf('proxies:')));
    const declined = await atTerminal(emu, cwd, ['apply', '--prune'], 'no\n', { NO_COLOR: '1' });
    expect(declined.code).toBe(1);
    // The target first (issue 31: a change says where it goes), then the question.
    expect(declined.stderr).toBe(
      `target ${emu.url} (--base-url)\nDelete 1 resource (proxies.stripe)? Type yes to apply the plan: Error: Nothing applied.\n`,
    );
    expect(await list('proxies')).toHaveLength(1);
    const accepted = await atTerminal(emu, cwd, ['apply', '--prune'], 'yes\n', { NO_COLOR: '1' });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(await list('proxies')).toEqual([]);
  });

  test('the plan is coloured at a terminal, and not with NO_COLOR', async () => {
    const { emu, cwd } = await setup();
    expect((await atTerminal(emu, cwd, ['apply', '--dry-run'], '')).stdout).toContain('\u001b[32m+ create\u001b[39m');
    const plain = await atTerminal(emu, cwd, ['apply', '--dry-run'], '', { NO_COLOR: '1' });
    expect(plain.stdout).toContain('  + create applications.backend');
    expect(plain.stdout).not.toContain('\u001b[');
  });
});
