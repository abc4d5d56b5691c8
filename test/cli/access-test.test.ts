import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createApplication, createToken, startEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };

/**
 * A real emulator with `support` (cards masked under /pci/, personal data revealed under /pii/, and
 * a rule for /archive/ that the matrices below never reach), a card token, and the CLI with the
 * management key run in a folder holding the matrix file.
 */
async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const support = await createApplication(emu, {
    name: 'support',
    type: 'private',
    permissions: [],
    rules: [
      { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] },
      { priority: 2, container: '/pii/', transform: 'reveal', permissions: ['token:read', 'token:use'] },
      { priority: 3, container: '/archive/', transform: 'redact', permissions: ['token:read'] },
    ],
  });
  const card = await createToken(emu, { type: 'card', data: CARD });
  const svc = async (matrix: string, argv: string[] = [], env: Record<string, string> = {}) => {
    await writeFile(path.join(cwd, 'access.yaml'), matrix);
    return runSvc(
      ['access', 'test', 'access.yaml', ...argv, '--base-url', emu.url, '--management-key', emu.managementKey],
      {
        cwd,
        env,
      },
    );
  };
  return { emu, cwd, support, card, svc };
}

/** The rows of the plain results table, by case name: [result, expected, got, decided by]. */
function rowsOf(stdout: string): Record<string, string[]> {
  const rows: Record<string, string[]> = {};
  for (const line of stdout.split('\n')) {
    const cells = line.split(/ {2,}/);
    if (cells[0] === 'ok' || cells[0] === 'FAIL') rows[cells[1]!] = [cells[0], ...cells.slice(2)];
  }
  return rows;
}

const passing = (card: string) => `
cases:
  - name: support reads cards masked
    application: support
    token: ${card}
    permission: token:read
    expect: allow
    transform: mask
  - name: support may not use cards
    application: support
    container: /pci/high/
    permission: token:use
    expect: deny
  - name: support uses personal data
    application: support
    container: /pii/emails/
    permission: token:use
    expect: allow
    transform: reveal
  - name: the private key reads by its plain permissions
    api_key: \${env:PRIVATE_KEY}
    token: ${card}
    permission: token:read
    expect: allow
`;

describe('svc access test', () => {
  test('a matrix that holds: every case ok, exit 0', async () => {
    const { emu, card, svc } = await setup();
    const result = await svc(passing(card.id), [], { PRIVATE_KEY: emu.privateKey });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^RESULT {2}CASE +EXPECTED +GOT +DECIDED BY$/m);
    expect(rowsOf(result.stdout)).toEqual({
      'support reads cards masked': ['ok', 'allow mask', 'allow mask', 'rule #0 /pci/'],
      'support may not use cards': ['ok', 'deny', 'deny', 'rule #0 /pci/'],
      'support uses personal data': ['ok', 'allow reveal', 'allow reveal', 'rule #1 /pii/'],
      'the private key reads by its plain permissions': ['ok', 'allow', 'allow mask', 'plain permissions'],
    });
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('4 cases: 4 passed, 0 failed.');
    expect(result.stdout).not.toContain(emu.privateKey);
  });

  test('a mismatch: the table shows it with its reason, exit 1; --json says the same', async () => {
    const { card, svc } = await setup();
    const matrix = `
cases:
  - name: support reads cards in full
    application: support
    token: ${card.id}
    permission: token:read
    expect: allow
    transform: reveal
  - name: support deletes cards
    application: support
    token: ${card.id}
    permission: token:delete
    expect: allow
  - application: support
    container: /pii/
    permission: token:read
    expect: allow
  - name: a missing token is not a deny
    application: support
    token: no-such-token
    permission: token:read
    expect: deny
`;
    const result = await svc(matrix);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe('');
    expect(rowsOf(result.stdout)).toEqual({
      'support reads cards in full': ['FAIL', 'allow reveal', 'allow mask', 'rule #0 /pci/'],
      'support deletes cards': ['FAIL', 'allow', 'deny', expect.any(String)],
      'case 3': ['ok', 'allow', 'allow reveal', 'rule #1 /pii/'],
      'a missing token is not a deny': ['FAIL', 'deny', 'not_found', 'nothing'],
    });
    expect(result.stdout).toMatch(
      /^access\.yaml:3 support reads cards in full: expected allow reveal, got allow mask \(.+\)$/m,
    );
    expect(result.stdout).toMatch(/^access\.yaml:9 support deletes cards: expected allow, got deny \(.+\)$/m);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('4 cases: 1 passed, 3 failed.');

    const json = await svc(matrix, ['--json']);
    expect(json.code).toBe(1);
    const document = json.json();
    expect(document).toMatchObject({ file: 'access.yaml', passed: 1, failed: 3 });
    expect(document.cases[0]).toMatchObject({
      name: 'support reads cards in full',
      line: 3,
      pass: false,
      expected: { outcome: 'allow', transform: 'reveal' },
      got: { outcome: 'allow', decision: 'granted', transform: 'mask' },
      decided_by: { rule: 0 },
    });
    expect(document.coverage).toBeUndefined();
  });

  test('--coverage: how many cases each rule decided, and the rule none reached', async () => {
    const { emu, support, card, svc } = await setup();
    const result = await svc(passing(card.id), ['--coverage'], { PRIVATE_KEY: emu.privateKey });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^support +rule #0 \/pci\/ +1 +2$/m);
    expect(result.stdout).toMatch(/^support +rule #1 \/pii\/ +2 +1$/m);
    expect(result.stdout).toMatch(/^support +rule #2 \/archive\/ +3 +0$/m);
    expect(result.stdout).toContain('Rules no case decided (1): support rule #2 /archive/.');

    const json = await svc(passing(card.id), ['--coverage', '--json'], { PRIVATE_KEY: emu.privateKey });
    expect(json.code, json.stderr).toBe(0);
    const { coverage } = json.json();
    const covered = coverage.applications.find((entry: { id: string }) => entry.id === support.id);
    expect(covered.rules.map((rule: { cases: number }) => rule.cases)).toEqual([2, 1, 0]);
    expect(covered).toMatchObject({ name: 'support', plain_permissions: 0, undecided: 0 });
    expect(coverage.unreached).toEqual([
      { application: { id: support.id, name: 'support' }, rule: 2, priority: 3, container: '/archive/' },
    ]);
  });
});

describe("the README's example matrix", () => {
  test('holds against the Applications it names, exit 0', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const block = /```yaml\n {2}# access\.yaml\n([\s\S]*?) {2}```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const matrix = block!.replace(/^ {2}/gm, '');
    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const rule = (transform: string, permissions: string[]) => ({
      priority: 1,
      container: '/pci/',
      transform,
      permissions,
    });
    await createApplication(emu, {
      name: 'support',
      type: 'private',
      permissions: [],
      rules: [rule('mask', ['token:read'])],
    });
    await createApplication(emu, {
      name: 'billing',
      type: 'private',
      permissions: [],
      rules: [rule('reveal', ['token:use'])],
    });
    const partner = await createApplication(emu, {
      type: 'private',
      permissions: [],
      rules: [rule('redact', ['token:read'])],
    });
    const card = await createToken(emu, { type: 'card', data: CARD });
    await writeFile(path.join(cwd, 'access.yaml'), matrix);
    const result = await runSvc(
      ['access', 'test', 'access.yaml', '--coverage', '--base-url', emu.url, '--management-key', emu.managementKey],
      {
        cwd,
        env: { PARTNER_KEY: partner.key, CARD_TOKEN: card.id },
      },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('4 cases: 4 passed, 0 failed.');
    expect(result.stdout).toContain('Every access rule decided at least one case.');
  });
});

describe('svc access test: a file that does not load', () => {
  test.each([
    [
      'a value out of its set',
      'cases:\n  - name: x\n    application: a\n    permission: token:read\n    expect: maybe\n',
      /^Error: access\.yaml:5: case 1 "x", expect: must be one of allow, deny$/,
    ],
    [
      'an unknown field',
      'cases:\n  - application: a\n    permission: token:read\n    expect: deny\n    expected: deny\n',
      /^Error: access\.yaml:5: case 1, expected: unknown key "expected"/,
    ],
    [
      'no Application',
      'cases:\n  - container: /pci/\n    permission: token:read\n    expect: deny\n',
      /^Error: access\.yaml:2: case 1: names no Application/,
    ],
    [
      'a transform for a deny',
      'cases:\n  - application: a\n    permission: token:read\n    expect: deny\n    transform: mask\n',
      /^Error: access\.yaml:5: case 1, transform: only with expect: allow/,
    ],
    ['no cases', 'cases: []\n', /^Error: access\.yaml:1: cases: must have at least 1 item/],
    [
      'a variable not set',
      'cases:\n  - api_key: ${env:NOPE}\n    permission: token:read\n    expect: deny\n',
      /^Error: access\.yaml:2: case 1, api_key: the environment variable NOPE is not set/,
    ],
    ['not YAML', 'cases: [\n', /^Error: access\.yaml:2:1 /],
    ['two problems', 'cases:\n  - permission: nope\n    expect: maybe\n', /\(and \d+ more problems?\)$/],
  ])('%s: one line naming the case and field, exit 1, no request', async (_label, matrix, message) => {
    const server = await startReceiver(() => 500, '');
    const cwd = await tempDir();
    await writeFile(path.join(cwd, 'access.yaml'), matrix);
    const result = await runSvc(
      ['access', 'test', 'access.yaml', '--base-url', server.url, '--management-key', 'k'.repeat(32)],
      { cwd },
    );
    expectOneLineError(result, 1, message);
    expect(server.received).toEqual([]);
  });

  test('a missing file', async () => {
    const cwd = await tempDir();
    const result = await runSvc(
      ['access', 'test', 'nope.yaml', '--base-url', 'http://127.0.0.1:9', '--management-key', 'k'.repeat(32)],
      { cwd },
    );
    expectOneLineError(result, 1, 'Error: Cannot read nope.yaml: no such file.');
  });

  test('an Application no one has: one line naming the case', async () => {
    const { svc } = await setup();
    const result = await svc(
      'cases:\n  - name: ghost\n    application: ghost\n    container: /pci/\n    permission: token:read\n    expect: deny\n',
    );
    expectOneLineError(result, 1, /^Error: access\.yaml:2: case "ghost": No Application named "ghost"/);
  });

  test('a server without explanations: one line saying so', async () => {
    const server = await startReceiver(
      () => (response) => {
        response.writeHead(404, { 'content-type': 'text/html' });
        response.end('<h1>Not Found</h1>');
      },
      '',
    );
    const cwd = await tempDir();
    await writeFile(
      path.join(cwd, 'access.yaml'),
      'cases:\n  - api_key: abc\n    container: /pci/\n    permission: token:read\n    expect: deny\n',
    );
    const result = await runSvc(
      ['access', 'test', 'access.yaml', '--base-url', server.url, '--management-key', 'k'.repeat(32)],
      { cwd },
    );
    expectOneLineError(result, 1, /offers no explanations/);
  });
});
