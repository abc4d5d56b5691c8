import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { createApplication, createToken, startEmulator } from '../helpers/emulator.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };

/**
 * A real emulator with an Application `support` whose rules read cards masked (/pci/) and use
 * personal data (/pii/), a card token in /pci/high/, and the CLI run with the management key.
 */
async function setup(name = 'support') {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const support = await createApplication(emu, {
    name,
    type: 'private',
    permissions: [],
    rules: [
      { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'], description: 'cards, masked' },
      { priority: 2, container: '/pii/', transform: 'reveal', permissions: ['token:read', 'token:use'] },
    ],
  });
  const card = await createToken(emu, { type: 'card', data: CARD });
  const svc = (argv: string[], extra: { env?: Record<string, string>; tty?: boolean } = {}) =>
    runSvc([...argv, '--base-url', emu.url, '--management-key', emu.managementKey], { cwd, ...extra });
  return { emu, cwd, support, card, svc };
}

describe('svc explain TRACE_ID', () => {
  test('a CLI command the emulator refused names the command that shows why, and that command shows it', async () => {
    const { emu, cwd, support, card, svc } = await setup();
    const refused = await runSvc(
      ['tokens', 'delete', card.id, '--yes', '--base-url', emu.url, '--api-key', support.key],
      { cwd },
    );
    expect(refused.code).toBe(1);
    const traceId = /`svc explain ([0-9a-f-]{36})` shows why\.$/.exec(refused.stderr.trimEnd())?.[1];
    expect(traceId, refused.stderr).toBeDefined();
    const shown = await svc(['explain', traceId!]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`DELETE /tokens/${card.id} -> 403`);
  });

  test('a refused request: its decision as a tree, and --json the stored explanation', async () => {
    const { emu, support, card, svc } = await setup();
    const refused = await emu.call('DELETE', `/tokens/${card.id}`, { key: support.key });
    expect(refused.status, refused.text).toBe(403);
    const traceId = refused.body.trace_id as string;
    expect(traceId).toBeTruthy();

    const json = await svc(['explain', traceId, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const stored = json.json();
    expect(stored).toMatchObject({ trace_id: traceId, method: 'DELETE', status: 403 });
    expect(stored.explanation).toMatchObject({
      decision: 'denied',
      application: { id: support.id, name: 'support' },
    });
    expect(JSON.stringify(stored)).not.toContain(CARD.number);

    const human = await svc(['explain', traceId]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toBe('');
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toContain(`DELETE /tokens/${card.id} -> 403`);
    expect(lines[0]).toContain(`trace ${traceId}`);
    expect(human.stdout).toMatch(/^├─ asked$/m);
    expect(human.stdout).toMatch(/application {2}support \(private, [0-9a-f-]{36}\)/);
    expect(human.stdout).toContain('access rules, in priority order');
    // The rule that covers /pci/high/ first refuses: it decided, and does not grant token:delete.
    expect(human.stdout).toMatch(/^│ {5}├─ ✗ rule #0 \/pci\/ priority 1 "cards, masked" <- decided$/m);
    expect(human.stdout).toMatch(/^│ {5}│ {2}├─ container \/pci\/ ✓ · conditions n\/a · permission ✗$/m);
    expect(human.stdout).toMatch(/^│ {5}└─ · rule #1 \/pii\/ priority 2$/m);
    expect(human.stdout).toMatch(/^└─ result {2}denied: \S.*token:delete/m);
    expect(lines.at(-1)).toBe('   └─ decided by rule #0 /pci/');
    expect(human.stdout).not.toMatch(/\u001b\[/);
  });

  test('a refused detokenization: each expression with its outcome, a missing token as not_found', async () => {
    const { emu, support, card, svc } = await setup();
    const body = { card: `{{ ${card.id} }}`, other: '{{ no-such-token }}' };
    const refused = await emu.call('POST', '/detokenize', { key: support.key, body });
    expect(refused.status, refused.text).toBe(403);
    const human = await svc(['explain', refused.body.trace_id]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^├─ expressions$/m);
    expect(human.stdout).toMatch(new RegExp(`^│  ├─ \\{\\{ ${card.id} \\}\\} denied \\(rule #0 /pci/\\)$`, 'm'));
    expect(human.stdout).toMatch(/^│ {2}└─ \{\{ no-such-token \}\} not_found$/m);
    expect(human.stdout).not.toContain(CARD.number);
  });

  test("an unknown trace id is the server's 404, one line", async () => {
    const { svc } = await setup();
    const result = await svc(['explain', 'no-such-trace']);
    expectOneLineError(result, 1, /^Error: .*\(404\)/);
    expect(result.stderr).not.toContain('offers no explanations');
  });
});

describe('svc explain: a hypothetical', () => {
  test('by Application name and token: the rule that decides, and the transform', async () => {
    const { support, card, svc } = await setup();
    const json = await svc([
      'explain',
      '--application',
      'support',
      '--token',
      card.id,
      '--permission',
      'token:read',
      '--json',
    ]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({
      decision: 'granted',
      explanation: {
        decision: 'granted',
        application: { id: support.id },
        decided_by: { rule: 0 },
        transform: 'mask',
        token: { id: card.id, containers: ['/pci/high/'] },
      },
    });

    const human = await svc(['explain', '--application', 'support', '--token', card.id, '--permission', 'token:read']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/✓ rule #0 \/pci\/ priority 1 "cards, masked" <- decided/);
    expect(human.stdout).toMatch(/container \/pci\/ ✓ · conditions n\/a · permission ✓/);
    expect(human.stdout).toContain(`token        ${card.id} in /pci/high/`);
    expect(human.stdout).toMatch(/└─ result {2}granted: /);
    expect(human.stdout).toContain('decided by rule #0 /pci/');
    expect(human.stdout).toContain('transform mask');
  });

  test('by key (the global --api-key) and container: a refusal with its nearest miss', async () => {
    const { support, svc } = await setup();
    const result = await svc([
      'explain',
      '--api-key',
      support.key,
      '--container',
      '/pci/high/',
      '--permission',
      'token:use',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const { explanation } = result.json();
    expect(explanation.decision).toBe('denied');
    expect(explanation.application.id).toBe(support.id);
    expect(explanation.rules[0].criteria).toMatchObject({ container: true, permission: false });
    expect(result.stdout).not.toContain(support.key);
  });

  test('names a server chose are made safe; colour on a terminal, none with NO_COLOR', async () => {
    const { card, svc } = await setup('evil\u001b]0;pwned\u0007name');
    const argv = [
      'explain',
      '--application',
      'evil\u001b]0;pwned\u0007name',
      '--token',
      card.id,
      '--permission',
      'token:read',
    ];
    const painted = await svc(argv, { tty: true });
    expect(painted.code, painted.stderr).toBe(0);
    expect(painted.stdout).toContain('evil\\u001b]0;pwned\\u0007name');
    expect(painted.stdout).not.toContain('\u0007');
    expect(painted.stdout).toMatch(/\u001b\[32m✓\u001b\[39m/);

    const plain = await svc(argv, { tty: true, env: { NO_COLOR: '1' } });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toMatch(/\u001b\[/);
    expect(plain.stdout).toContain('evil\\u001b]0;pwned\\u0007name');
  });

  test('an unknown Application: one line naming it', async () => {
    const { svc } = await setup();
    const result = await svc([
      'explain',
      '--application',
      'nobody',
      '--container',
      '/pci/',
      '--permission',
      'token:read',
    ]);
    expectOneLineError(result, 1, /^Error: No Application named "nobody"/);
  });
});

describe('svc explain: usage', () => {
  test.each([
    ['nothing to explain', ['explain'], /TRACE_ID/],
    ['a trace id and a hypothetical', ['explain', 'abc', '--permission', 'token:read'], /not both/],
    ['no permission', ['explain', '--application', 'support'], /--permission/],
    [
      'no Application',
      ['explain', '--container', '/pci/', '--permission', 'token:read'],
      /--application NAME_OR_ID or --api-key/,
    ],
    [
      'a token and a container',
      ['explain', '--application', 'a', '--token', 't', '--container', '/pci/', '--permission', 'token:read'],
      /--token or --container/,
    ],
  ])('%s: one line, exit 2', async (_label, argv, message) => {
    const cwd = await tempDir();
    const result = await runSvc([...argv, '--base-url', 'http://127.0.0.1:9', '--management-key', 'k'.repeat(32)], {
      cwd,
    });
    expectOneLineError(result, 2, message);
  });
});

describe('svc explain against a server without explanations', () => {
  test.each([
    ['a plain 404', 404, 'text/plain', 'not found'],
    ["another API's JSON 404", 404, 'application/json', '{"error":"not found"}'],
    ['a 405', 405, 'text/html', '<h1>Method Not Allowed</h1>'],
    [
      'an svc emulator from before explanations (its "No route" 404)',
      404,
      'application/problem+json',
      JSON.stringify({
        type: 'urn:svc:problem:not-found',
        title: 'Not found',
        status: 404,
        detail: 'No route GET /_emulator/explanations/abc.',
        trace_id: '6f1c2b1e-0d1e-4e55-9b8a-0c2b9f0e1a77',
      }),
    ],
  ])('%s: one line saying so, exit 1', async (_label, status, type, body) => {
    const server = await startReceiver(
      () => (response) => {
        response.writeHead(status, { 'content-type': type });
        response.end(body);
      },
      '',
    );
    const cwd = await tempDir();
    const target = ['--base-url', server.url, '--management-key', 'k'.repeat(32)];
    const byTrace = await runSvc(['explain', 'abc', ...target], { cwd });
    expectOneLineError(
      byTrace,
      1,
      `Error: The server at ${server.url} offers no explanations (HTTP ${status} on its explanation routes).`,
    );
    const hypothetical = await runSvc(
      ['explain', '--api-key', 'a'.repeat(32), '--container', '/pci/', '--permission', 'token:read', ...target],
      { cwd },
    );
    expectOneLineError(hypothetical, 1, /offers no explanations/);
  });
});
