import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { allCommands, commandsFor } from '../../src/cli/commands/index.js';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const VERBS = ['list', 'get', 'create', 'update', 'delete', 'regenerate', 'whoami'];

async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

/** The command names listed under "Commands:" in a help text. */
const GLOBAL_OPTIONS = ['--base-url', '--management-key', '--api-key', '--profile', '--json', '--no-color', '--debug'];

function commandsOf(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}([a-z]+)/gm)].map((match) => match[1]!);
}

describe('svc', () => {
  test('--version and -v print the package.json version', async () => {
    const cwd = await tempDir();
    const version = await packageVersion();
    for (const flag of ['--version', '-v']) {
      const result = await runSvc(flag, { cwd });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${version}\n`);
      expect(result.stderr).toBe('');
    }
  });

  test('--help lists the commands and the global options on stdout', async () => {
    const cwd = await tempDir();
    const result = await runSvc('--help', { cwd });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^Usage: svc /);
    expect(commandsOf(result.stdout)).toEqual(expect.arrayContaining(['serve', 'applications', 'profiles']));
    for (const option of GLOBAL_OPTIONS) {
      expect(result.stdout).toContain(option);
    }
  });

  test('an unknown command is a usage error with a suggestion', async () => {
    const cwd = await tempDir();
    const result = await runSvc('applicatons list', { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/unknown command 'applicatons'/i);
    expect(result.stderr).toMatch(/Did you mean applications\?/);
    expect(result.stderr).not.toContain('    at ');
  });

  test('an unknown verb and an unknown global option are usage errors', async () => {
    const cwd = await tempDir();
    const verb = await runSvc('applications frobnicate', { cwd });
    expect(verb.code).toBe(2);
    expect(verb.stderr).toMatch(/unknown command 'frobnicate'/i);
    const option = await runSvc('--frob applications list', { cwd });
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/unknown option '--frob'/i);
    expect(option.stdout).toBe('');
  });

  test('applications --help lists the verbs', async () => {
    const cwd = await tempDir();
    const result = await runSvc('applications --help', { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: svc applications\|apps /);
    expect(commandsOf(result.stdout)).toEqual(expect.arrayContaining(VERBS));
  });

  test('applications without a verb prints the verbs on stderr and exits 2', async () => {
    const cwd = await tempDir();
    const result = await runSvc('applications', { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(commandsOf(result.stderr)).toEqual(expect.arrayContaining(VERBS));
  });

  test('profiles --help lists its verbs', async () => {
    const cwd = await tempDir();
    const result = await runSvc('profiles --help', { cwd });
    expect(result.code).toBe(0);
    expect(commandsOf(result.stdout)).toEqual(expect.arrayContaining(['add', 'list', 'use', 'remove']));
  });

  test('a verb --help shows its options and examples', async () => {
    const cwd = await tempDir();
    const result = await runSvc('applications create --help', { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--type <type>.*choices: "private", "public",/s);
    expect(result.stdout).toMatch(/^Examples:\n {2}\$ svc applications create /m);
  });

  test('every command\'s help lists the global options, and says no "(default: false)"', async () => {
    const cwd = await tempDir();
    const lines = (await allCommands()).flatMap((entry) =>
      'commands' in entry ? [entry.name, ...entry.commands.map((verb) => `${entry.name} ${verb.name}`)] : [entry.name],
    );
    expect(lines.length).toBeGreaterThan(40);
    for (const line of ['', ...lines]) {
      const result = await runSvc(`${line} --help`, { cwd });
      expect(result.code, line).toBe(0);
      expect(result.stdout, line).not.toMatch(/default: (false|true)\)/);
      if (line === '') continue;
      const global = result.stdout.split(/^Global Options:$/m)[1] ?? '';
      for (const option of GLOBAL_OPTIONS) {
        expect(global, `${line} --help`).toContain(option);
      }
    }
  });

  test('serve --help shows every flag serve reads, and the environment it reads', async () => {
    const cwd = await tempDir();
    const { stdout } = await runSvc('serve --help', { cwd });
    for (const flag of [
      '--port',
      '--host',
      '--data',
      '--in-memory',
      '--private-key',
      '--tier',
      '--transaction-ttl',
      '--log-format',
      '--management-key',
      '--debug',
      '--no-color',
    ]) {
      expect(stdout).toContain(flag);
    }
    for (const env of ['SVC_MANAGEMENT_KEY', 'SVC_PRIVATE_KEY', 'SVC_MASTER_KEY']) expect(stdout).toContain(env);
  });

  test('the root help ends with examples of a first session', async () => {
    const cwd = await tempDir();
    const { stdout } = await runSvc('--help', { cwd });
    const examples = stdout.split(/^Examples:$/m)[1] ?? '';
    expect(examples).toMatch(/^ {2}\$ svc serve /m);
    expect(examples).toMatch(/^ {2}\$ svc invoke reactor /m);
  });

  test('the aliases apps and ls reach applications list', async () => {
    const cwd = await tempDir();
    // No emulator and no keys: the list handler runs and asks for a key.
    const result = await runSvc('apps ls', { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error: No management key/);
  });
});

describe('the commands a command line loads', () => {
  test('only the one its first word names (global options and their values skipped), else all', async () => {
    const names = async (argv: string[]) => (await commandsFor(argv)).map((entry) => entry.name);
    expect(await names(['apps', 'list'])).toEqual(['applications']);
    expect(await names(['--base-url', 'http://x', '--json', 'serve', '--port', '0'])).toEqual(['serve']);
    expect(await names(['--profile', 'serve', 'tokens', 'list'])).toEqual(['tokens']);
    const all = (await allCommands()).map((entry) => entry.name);
    expect(all.length).toBeGreaterThan(15);
    for (const argv of [[], ['--help'], ['help', 'serve'], ['aplications', 'list']])
      expect(await names(argv)).toEqual(all);
  });

  test('a typo is still answered with a suggestion, and an alias runs its command', async () => {
    const typo = await runSvc('aplications list', { cwd: await tempDir() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/Did you mean applications\?/);
    const help = await runSvc('apps ls --help', { cwd: await tempDir() });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc applications list/m);
  });
});
