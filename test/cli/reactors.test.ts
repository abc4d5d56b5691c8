import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { verifySignature } from '../../src/emulator/services/webhooks.js';
import { type CliResult, expectOneLineError, fieldsOf, runSvc, splitArgs } from '../helpers/cli.js';
import { forkedTenants, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };

/** Echoes what it got; the configuration shows that --configuration reached the code. */
const HELLO = `module.exports = async function (req) {
  console.log('hello from', req.args.who ?? 'nobody');
  return { raw: { version: 1, args: req.args, configuration: req.configuration } };
};
`;
const V2 = `module.exports = async (req) => ({ raw: { version: 2, x: req.args.x ?? null } });
`;
const LAST4 = `module.exports = async (req) => ({ raw: { last4: req.args.card.number.slice(-4) } });
`;
const REFUSES = `module.exports = async (req) => {
  if (!req.args.amount) throw new BadRequestError('amount is required');
  return { raw: { ok: true } };
};
`;
/** A .env as dotenv reads it: comments, quotes, blank lines, an `export` line and plain lines. */
const DOTENV = `# the upstream
API_URL=https://example.com/api   # trailing comment
QUOTED="a value # not a comment"
SINGLE='single quoted'

export EXPORTED=yes
A=from-file
`;

/**
 * One real emulator for the file, a tenant of its own for each test (forked from a template: no
 * emulator start and no sandbox boot per test), and the CLI run against it with the base URL and both keys.
 */
const tenant = forkedTenants();

async function setup(emu: TestEmulator | Promise<TestEmulator> = tenant()) {
  emu = await emu;
  const cwd = await tempDir();
  const svc = (line: string | string[], extra: { stdin?: string } = {}): Promise<CliResult> => {
    const argv = typeof line === 'string' ? splitArgs(line) : line;
    return runSvc(
      [...argv, '--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey],
      { cwd, ...extra },
    );
  };
  const write = (file: string, text: string) => writeFile(path.join(cwd, file), text);
  await write('hello.js', HELLO);
  return { emu, cwd, svc, write };
}

/** Creates a reactor straight through the API. */
async function createReactor(
  emu: TestEmulator,
  name: string,
  code: string,
  configuration: Record<string, string> = {},
) {
  const result = await emu.call('POST', '/reactors', { body: { name, code, configuration } });
  expect(result.status, result.text).toBe(201);
  return result.body as { id: string; name: string };
}

async function createApp(emu: TestEmulator, name: string) {
  const result = await emu.call('POST', '/applications', {
    body: { name, type: 'private', permissions: ['token:read'] },
  });
  expect(result.status, result.text).toBe(201);
  return result.body as { id: string; name: string };
}

async function reactorCount(emu: TestEmulator): Promise<number> {
  return (await emu.call('GET', '/reactors')).body.pagination.total_items as number;
}

/** A real loopback HTTP receiver for webhooks; closed when the test ends. */
async function startReceiver() {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Resolves once a delivery has arrived. */
    next: () => (received.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}

describe('reactors create', () => {
  test('from a code file, with --configuration pairs and a .env file, bound to an Application by name', async () => {
    const { emu, svc, write } = await setup();
    const app = await createApp(emu, 'binder');
    await write('.env', DOTENV);
    const result = await svc(
      'reactors create --name hello --code hello.js --configuration A=1 --configuration @.env --application binder',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const fields = fieldsOf(result.stdout);
    expect(fields).toMatchObject({
      name: 'hello',
      application: `binder (${app.id})`,
    });
    expect(fields.configuration?.split(', ').sort()).toEqual(['A', 'API_URL', 'EXPORTED', 'QUOTED', 'SINGLE']);
    expect(fields.code).toMatch(/^\d+ lines$/);
    expect(fields.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(fields.created).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(fields.modified).toBe(fields.created);
    // The code itself is not printed without --show-code.
    expect(result.stdout).not.toContain('module.exports');

    const stored = await emu.call('GET', `/reactors/${fields.id}`);
    expect(stored.body.code).toBe(HELLO);
    expect(stored.body.application.id).toBe(app.id);
    // Later values win: the file's A replaces the pair given before it; comments and quotes as dotenv reads them.
    expect(stored.body.configuration).toEqual({
      A: 'from-file',
      API_URL: 'https://example.com/api',
      QUOTED: 'a value # not a comment',
      SINGLE: 'single quoted',
      EXPORTED: 'yes',
    });
  });

  test('--json prints exactly the API object; --application takes an id too', async () => {
    const { emu, svc } = await setup();
    const app = await createApp(emu, 'binder');
    const result = await svc(
      `reactors create --name hello --code hello.js --configuration KEY=a=b --application ${app.id} --json`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const reactor = result.json();
    const stored = await emu.call('GET', `/reactors/${reactor.id}`);
    expect(stored.status).toBe(200);
    expect(result.stdout).toBe(`${JSON.stringify(stored.body, null, 2)}\n`);
    // Only the first "=" splits a pair.
    expect(reactor).toMatchObject({
      name: 'hello',
      code: HELLO,
      configuration: { KEY: 'a=b' },
      application: { id: app.id, name: 'binder' },
    });
  });

  test('without --application or --configuration: no Application, an empty configuration', async () => {
    const { emu, svc } = await setup();
    const result = await svc('reactors create --name plain --code hello.js');
    expect(result.code, result.stderr).toBe(0);
    expect(fieldsOf(result.stdout)).toMatchObject({ application: '(none)', configuration: '(none)' });
    const { body } = await emu.call('GET', '/reactors');
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ name: 'plain', application: null, configuration: {} });
  });

  test('a code file that does not exist names the file, and nothing is created', async () => {
    const { emu, svc, cwd } = await setup();
    const result = await svc('reactors create --name hello --code nope.js');
    expectOneLineError(result, 1, /^Error: Cannot read the code file .*nope\.js: no such file\.$/);
    expect(result.stderr).toContain(path.join(cwd, 'nope.js'));
    expect(await reactorCount(emu)).toBe(0);
  });

  test('a .env file that does not exist names the file', async () => {
    const { emu, svc, cwd } = await setup();
    const result = await svc('reactors create --name hello --code hello.js --configuration @missing.env');
    expectOneLineError(result, 1, /^Error: Cannot read the configuration file .*missing\.env: no such file\.$/);
    expect(result.stderr).toContain(path.join(cwd, 'missing.env'));
    expect(await reactorCount(emu)).toBe(0);
  });

  test('code that throws as it loads: one 422 line with the local path:line:column, and nothing is created', async () => {
    const { emu, svc, write, cwd } = await setup();
    await mkdir(path.join(cwd, 'reactors'));
    await write('reactors/charge.js', '// loads, then fails\n\nnull.boom;\nmodule.exports = async () => ({});\n');
    const result = await svc('reactors create --name hello --code ./reactors/charge.js');
    // The file the user gave (which editors open at the line), not the server's name for it (hello.js).
    expectOneLineError(
      result,
      1,
      "Error: Code does not load (422): reactors/charge.js:3:6: TypeError: Cannot read properties of null (reading 'boom')",
    );
    expect(await reactorCount(emu)).toBe(0);
  });

  test('a syntax error: the 422 title and the local path:line:column on the first line', async () => {
    const { emu, svc, write } = await setup();
    await write('bad.js', '// a comment\n\nconst x = ;\nmodule.exports = async () => x;\n');
    const result = await svc('reactors create --name my-reactor --code bad.js');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(
      "Error: Code does not load (422): bad.js:3:11: SyntaxError: Unexpected token ';'",
    );
    expect(result.stderr).not.toContain('    at ');
    expect(await reactorCount(emu)).toBe(0);
  });

  test('the column of an error on line 1 is the file’s own, whatever wraps the code; a strict-mode error has one too', async () => {
    const { svc, write } = await setup();
    await write('one-line.js', 'const limit = 10; limit.check(); module.exports = async () => ({});\n');
    expectOneLineError(
      await svc('reactors create --name limits --code one-line.js'),
      1,
      'Error: Code does not load (422): one-line.js:1:25: TypeError: limit.check is not a function',
    );
    await write('octal.js', 'module.exports = async () => ({ raw: 010 });\n');
    expectOneLineError(
      await svc('reactors create --name strict --code octal.js'),
      1,
      'Error: Code does not load (422): octal.js:1:38: SyntaxError: Octal literals are not allowed in strict mode.',
    );
  });

  test('with --json a load failure is the 422 problem as JSON on stderr, naming the local file', async () => {
    const { svc, write } = await setup();
    await write('broken.js', 'throw new RangeError("nope");\n');
    const result = await svc('reactors create --name hello --code broken.js --json');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr) as {
      error: { status: number; title: string; detail: string; location: unknown };
    };
    expect(error).toMatchObject({ status: 422, title: 'Code does not load' });
    expect(error.detail).toBe('broken.js:1:7: RangeError: nope');
    // The server's name for the file and where in it, as a structured member (the detail is prose).
    expect(error.location).toEqual({ file: 'hello.js', line: 1, column: 7 });
  });

  test('missing --name or --code is a usage error', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(await svc('reactors create --code hello.js'), 2, /^Error: A reactor needs --name and --code\.$/);
    expectOneLineError(await svc('reactors create --name hello'), 2, /^Error: A reactor needs --name and --code\.$/);
    expect(await reactorCount(emu)).toBe(0);
  });

  test('--configuration without "=" is a usage error naming the value', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc('reactors create --name hello --code hello.js --configuration novalue'),
      2,
      /^Error: --configuration takes KEY=VALUE or @file\.env, not "novalue"\.$/,
    );
    expectOneLineError(await svc('reactors create --name hello --code hello.js --configuration =v'), 2, /not "=v"/);
    expect(await reactorCount(emu)).toBe(0);
  });

  test('an unknown Application name is an error, and nothing is created', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc('reactors create --name hello --code hello.js --application ghost'),
      1,
      /^Error: No Application named "ghost"; `svc applications list` shows them\.$/,
    );
    expect(await reactorCount(emu)).toBe(0);
  });

  test('binding a management Application is refused by the API with the field named', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc(['reactors', 'create', '--name', 'hello', '--code', 'hello.js', '--application', 'svc management']),
      1,
      /^Error: Validation failed \(400\): --application \(application\.id\): must be a public or private Application$/,
    );
    expect(await reactorCount(emu)).toBe(0);
  });
});

describe('reactors list, get, update, patch, delete', () => {
  test('list: a plain table; --json the API page; --name filters with a wildcard', async () => {
    const { emu, svc } = await setup();
    const app = await createApp(emu, 'binder');
    const hello = await createReactor(emu, 'hello', HELLO);
    const help = (
      await emu.call('POST', '/reactors', {
        body: { name: 'helper', code: V2, configuration: {}, application: { id: app.id } },
      })
    ).body;
    const other = await createReactor(emu, 'other', V2);

    const table = await svc('reactors list');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stderr).toBe('');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+APPLICATION\s+MODIFIED$/);
    expect(lines).toHaveLength(4);
    expect(lines.find((line) => line.startsWith(hello.id))).toMatch(/\shello\s+-\s+\d{4}-/);
    expect(lines.find((line) => line.startsWith(help.id))).toMatch(/\shelper\s+binder\s+\d{4}-/);
    expect(lines.find((line) => line.startsWith(other.id))).toMatch(/\sother\s+-\s/);

    const json = await svc('reactors ls --json');
    expect(json.code).toBe(0);
    expect(json.stdout).toBe(`${JSON.stringify((await emu.call('GET', '/reactors')).body, null, 2)}\n`);

    const filtered = await svc(['reactors', 'list', '--name', 'hel*', '--json']);
    expect(filtered.code).toBe(0);
    expect(
      filtered
        .json()
        .data.map((reactor: { name: string }) => reactor.name)
        .sort(),
    ).toEqual(['hello', 'helper']);
    const filteredTable = await svc(['reactors', 'list', '--name', 'hel*']);
    expect(filteredTable.stdout).not.toContain('other');
    expect(filteredTable.stdout.trimEnd().split('\n')).toHaveLength(3);
  });

  test('an empty list says so on stderr and prints nothing on stdout', async () => {
    const { svc } = await setup();
    const result = await svc('reactors list');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('No reactors.\n');
  });

  test('--page past the last page says so on stderr (the JSON page is as the API answers it)', async () => {
    const { emu, svc } = await setup();
    for (const name of ['a', 'b', 'c']) await createReactor(emu, name, V2);
    const result = await svc('reactors list --size 2 --page 5');
    expect([result.code, result.stdout, result.stderr]).toEqual([0, '', 'Page 5 is past the last page (2).\n']);
    const json = await svc('reactors list --size 2 --page 5 --json');
    expect(json.json()).toEqual({
      pagination: { total_items: 3, page_number: 5, page_size: 2, total_pages: 2 },
      data: [],
    });
    expect(json.stderr).toBe('');
    const last = await svc('reactors list --size 2 --page 2');
    expect(last.stderr).toBe('Page 2 of 2 (3 reactors); --page for more.\n');
  });

  test('list pages: --size and the note about more pages', async () => {
    const { emu, svc } = await setup();
    for (const name of ['a', 'b', 'c']) await createReactor(emu, name, V2);
    const result = await svc('reactors list --size 2');
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(result.stderr).toBe('Page 1 of 2 (3 reactors); --page for more.\n');
    const second = await svc('reactors list --size 2 --page 2 --json');
    expect(second.json().data).toHaveLength(1);
    expectOneLineError(await svc('reactors list --size two'), 2, /^Error: --size must be a whole number, not "two"\.$/);
  });

  test('get by name and by id; --json the API object; --show-code prints the code after the fields', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'hello', HELLO, { A: '1', B: '2' });
    const byName = await svc('reactors get hello');
    expect(byName.code, byName.stderr).toBe(0);
    expect(fieldsOf(byName.stdout)).toMatchObject({
      id: reactor.id,
      name: 'hello',
      configuration: 'A, B',
      application: '(none)',
    });
    expect(byName.stdout).not.toContain('module.exports');

    const byId = await svc(`reactors get ${reactor.id} --json`);
    expect(byId.stdout).toBe(`${JSON.stringify((await emu.call('GET', `/reactors/${reactor.id}`)).body, null, 2)}\n`);

    const withCode = await svc('reactors get hello --show-code');
    expect(withCode.code).toBe(0);
    expect(withCode.stdout.startsWith(byName.stdout)).toBe(true);
    expect(withCode.stdout.slice(byName.stdout.length)).toBe(`\n${HELLO}\n`);
  });

  test('the code field counts lines', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'one', 'module.exports = async () => ({});');
    await createReactor(emu, 'three', 'module.exports = async () => {\n  return {};\n};');
    expect(fieldsOf((await svc('reactors get one')).stdout).code).toBe('1 line');
    expect(fieldsOf((await svc('reactors get three')).stdout).code).toBe('3 lines');
  });

  // A file ending in a newline, as editors write them, is not shown with one line too many.
  test('the code field of a file ending in a newline counts its lines as an editor does', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'hello', HELLO);
    expect(HELLO.trimEnd().split('\n')).toHaveLength(4);
    expect(fieldsOf((await svc('reactors get hello')).stdout).code).toBe('4 lines');
  });

  test('get of an unknown name, or an unknown id', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc('reactors get nobody'),
      1,
      /^Error: No reactor named "nobody"; `svc reactors list` shows them\.$/,
    );
    const id = '00000000-0000-4000-8000-000000000000';
    const result = await svc(`reactors get ${id}`);
    expectOneLineError(result, 1, /^Error: Not found \(404\)/);
    expect(result.stderr).toContain(id);
  });

  test('an ambiguous name lists the ids', async () => {
    const { emu, svc } = await setup();
    const one = await createReactor(emu, 'twin', V2);
    const two = await createReactor(emu, 'twin', V2);
    const result = await svc('reactors delete twin --yes');
    expectOneLineError(result, 1, /^Error: 2 reactors are named "twin"; use an id/);
    expect(result.stderr).toContain(one.id);
    expect(result.stderr).toContain(two.id);
    expect(await reactorCount(emu)).toBe(2);
  });

  test('update --code replaces the code and keeps the other fields; the next invocation runs the new code', async () => {
    const { emu, svc, write } = await setup();
    const app = await createApp(emu, 'binder');
    const created = await svc(
      'reactors create --name hello --code hello.js --configuration A=1 --application binder --json',
    );
    const before = created.json();
    const first = await svc(['invoke', 'reactor', 'hello', '--args', '{"x":1}', '--json']);
    expect(first.json().raw.version).toBe(1);

    await write('v2.js', V2);
    const result = await svc('reactors update hello --code v2.js --json');
    expect(result.code, result.stderr).toBe(0);
    const after = result.json();
    expect(after).toMatchObject({
      id: before.id,
      name: 'hello',
      code: V2,
      configuration: { A: '1' },
      application: { id: app.id },
    });
    expect(after.created_at).toBe(before.created_at);
    expect(after.modified_at >= before.modified_at).toBe(true);

    const second = await svc(['invoke', 'reactor', 'hello', '--args', '{"x":7}', '--json']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json()).toEqual({ raw: { version: 2, x: 7 } });
  });

  test('update --name and --configuration replace (a PUT); the human form shows the result', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'hello', HELLO, { A: '1', B: '2' });
    const result = await svc('reactors update hello --name renamed --configuration C=3');
    expect(result.code, result.stderr).toBe(0);
    expect(fieldsOf(result.stdout)).toMatchObject({ id: reactor.id, name: 'renamed', configuration: 'C' });
    const stored = (await emu.call('GET', `/reactors/${reactor.id}`)).body;
    expect(stored).toMatchObject({ name: 'renamed', code: HELLO, configuration: { C: '3' } });
  });

  test('update --no-application unbinds the Application and keeps the rest', async () => {
    const { emu, svc } = await setup();
    await createApp(emu, 'binder');
    const created = (
      await svc('reactors create --name hello --code hello.js --configuration A=1 --application binder --json')
    ).json();
    expect(created.application).not.toBeNull();
    const result = await svc('reactors update hello --no-application');
    expect(result.code, result.stderr).toBe(0);
    expect(fieldsOf(result.stdout).application).toBe('(none)');
    const stored = (await emu.call('GET', `/reactors/${created.id}`)).body;
    expect(stored).toMatchObject({ application: null, configuration: { A: '1' }, code: HELLO, name: 'hello' });
  });

  test('update with a code file that does not load keeps the old code serving', async () => {
    const { emu, svc, write } = await setup();
    const reactor = await createReactor(emu, 'hello', HELLO);
    await write('broken.js', 'module.exports = 42;\n');
    const result = await svc('reactors update hello --code broken.js');
    expectOneLineError(result, 1, /^Error: Code does not load \(422\): broken\.js must export a function/);
    await write('throws.js', 'module.exports = async () => 1;\nmissing();\n');
    expectOneLineError(
      await svc('reactors patch hello --code throws.js'),
      1,
      /^Error: Code does not load \(422\): throws\.js:2:1: /,
    );
    expect((await emu.call('GET', `/reactors/${reactor.id}`)).body.code).toBe(HELLO);
    const invoked = await svc(['invoke', 'reactor', 'hello', '--json']);
    expect(invoked.json().raw.version).toBe(1);
  });

  test('patch --configuration merges into the current configuration and --unset removes a key', async () => {
    const { emu, svc } = await setup();
    const app = await createApp(emu, 'binder');
    const created = (
      await svc(
        'reactors create --name hello --code hello.js --configuration A=1 --configuration KEEP=k --application binder --json',
      )
    ).json();
    const result = await svc('reactors patch hello --configuration B=2 --unset A');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Patched reactor ${created.id} (configuration).\n`);

    const got = await svc('reactors get hello --json');
    expect(got.json().configuration).toEqual({ KEEP: 'k', B: '2' });
    expect(got.json()).toMatchObject({ name: 'hello', code: HELLO, application: { id: app.id } });
  });

  test('patch --json, --name and --no-application', async () => {
    const { emu, svc } = await setup();
    await createApp(emu, 'binder');
    const created = (await svc('reactors create --name hello --code hello.js --application binder --json')).json();
    const result = await svc('reactors patch hello --name renamed --no-application --json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual({ id: created.id, patched: ['name', 'application'] });
    const stored = (await emu.call('GET', `/reactors/${created.id}`)).body;
    expect(stored).toMatchObject({ name: 'renamed', application: null, code: HELLO });
  });

  test('patch with nothing to change is a usage error, and nothing changes', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'hello', HELLO, { A: '1' });
    const before = (await emu.call('GET', `/reactors/${reactor.id}`)).body;
    expectOneLineError(
      await svc('reactors patch hello'),
      2,
      /^Error: Nothing to change: pass --name, --code, --configuration, --unset or --\[no-\]application\.$/,
    );
    expect((await emu.call('GET', `/reactors/${reactor.id}`)).body).toEqual(before);
  });

  test('delete by name, then get is an error; delete --json prints the id', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'hello', HELLO);
    const deleted = await svc('reactors delete hello --yes');
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`Deleted reactor ${reactor.id}.\n`);
    expect((await emu.call('GET', `/reactors/${reactor.id}`)).status).toBe(404);
    expectOneLineError(await svc('reactors get hello'), 1, /^Error: No reactor named "hello"/);
    expectOneLineError(await svc(`reactors get ${reactor.id}`), 1, /^Error: Not found \(404\)/);
    expectOneLineError(await svc(['invoke', 'reactor', reactor.id]), 1, /^Error: Not found \(404\)/);

    const other = await createReactor(emu, 'other', V2);
    const json = await svc(`reactors rm ${other.id} --json --yes`);
    expect(json.json()).toEqual({ id: other.id, deleted: true });
    expect(await reactorCount(emu)).toBe(0);
  });
});

describe('invoke reactor', () => {
  test('prints the result as pretty JSON; console output stays in the emulator log', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'hello', HELLO, { A: '1' });
    const result = await svc(['invoke', 'reactor', 'hello', '--args', '{"x":1,"who":"cli"}']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const expected = { raw: { version: 1, args: { x: 1, who: 'cli' }, configuration: { A: '1' } } };
    expect(result.stdout).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(result.stdout).not.toContain('hello from');
    expect(emu.events).toContainEqual(
      expect.objectContaining({ type: 'console', source: 'hello', text: 'hello from cli' }),
    );
    expect(emu.events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'hello', status: 200 }));
  });

  test('--json prints exactly the API response', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'v2', V2);
    const result = await svc(['invoke', 'reactor', 'v2', '--args', '{"x":"y"}', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const api = await emu.call('POST', `/reactors/${reactor.id}/react`, {
      key: emu.privateKey,
      body: { args: { x: 'y' } },
    });
    expect(api.status).toBe(200);
    expect(result.stdout).toBe(`${JSON.stringify(api.body, null, 2)}\n`);
    expect(result.json()).toEqual({ raw: { version: 2, x: 'y' } });
  });

  test('without --args the reactor gets an empty object', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'hello', HELLO);
    const result = await svc('invoke reactor hello --json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json().raw.args).toEqual({});
  });

  test('--args @file and --args - (stdin)', async () => {
    const { emu, svc, write } = await setup();
    await createReactor(emu, 'v2', V2);
    await write('args.json', '{ "x": "from a file" }\n');
    const fromFile = await svc('invoke reactor v2 --args @args.json --json');
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(fromFile.json()).toEqual({ raw: { version: 2, x: 'from a file' } });

    const fromStdin = await svc('invoke reactor v2 --args - --json', { stdin: '{"x":"from stdin"}' });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.json()).toEqual({ raw: { version: 2, x: 'from stdin' } });

    expectOneLineError(
      await svc('invoke reactor v2 --args @missing.json'),
      1,
      /^Error: Cannot read --args file .*missing\.json: no such file\.$/,
    );
  });

  test('args that are not a JSON object, or not JSON, are usage errors; nothing runs', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'hello', HELLO);
    for (const args of ['[1,2]', '"text"', '42', 'null']) {
      expectOneLineError(
        await svc(['invoke', 'reactor', 'hello', '--args', args]),
        2,
        /^Error: --args must be a JSON object\.$/,
      );
    }
    expectOneLineError(
      await svc(['invoke', 'reactor', 'hello', '--args', '{x:1}']),
      2,
      /^Error: --args is not valid JSON/,
    );
    expect(emu.events.filter((event) => event.type === 'invocation')).toHaveLength(0);
  });

  test('{{ token }} expressions in args are detokenized before the code runs', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'last4', LAST4);
    const token = await emu.call('POST', '/tokens', { key: emu.privateKey, body: { type: 'card', data: CARD } });
    expect(token.status, token.text).toBe(201);
    const result = await svc([
      'invoke',
      'reactor',
      'last4',
      '--args',
      JSON.stringify({ card: `{{ ${token.body.id} }}` }),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ raw: { last4: '4242' } });
    expect(result.stdout).not.toContain(CARD.number);
  });

  test('a reactor that throws BadRequestError: one 400 line with its message, nothing on stdout', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'charge', REFUSES);
    const result = await svc(['invoke', 'reactor', 'charge', '--args', '{}']);
    expectOneLineError(result, 1, /^Error: Bad request \(400\): amount is required$/);
    expect(emu.events).toContainEqual(expect.objectContaining({ type: 'invocation', name: 'charge', status: 400 }));

    const ok = await svc(['invoke', 'reactor', 'charge', '--args', '{"amount":1}', '--json']);
    expect(ok.json()).toEqual({ raw: { ok: true } });

    const json = await svc(['invoke', 'reactor', 'charge', '--args', '{}', '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error).toMatchObject({
      status: 400,
      title: 'Bad request',
      detail: 'Bad Request',
      errors: { error: ['amount is required'] },
    });
  });

  test('a reactor that throws: one line with its file:line:column and the trace id of the serve log', async () => {
    const { emu, svc } = await setup();
    await createReactor(
      emu,
      'charge',
      'module.exports = async function (req) {\n  const upstream = null;\n  return { raw: upstream.id };\n};\n',
    );
    const result = await svc(['invoke', 'reactor', 'charge']);
    expectOneLineError(
      result,
      1,
      /^Error: User code error \(500\): charge\.js:3:26: TypeError: Cannot read properties of null \(reading 'id'\) \(trace id ([0-9a-f-]{36})\)$/,
    );
    const traceId = /trace id ([0-9a-f-]{36})/.exec(result.stderr)![1];
    // The same id as the serve log's line of this invocation, which has the stack.
    const logged = emu.events.find((event) => event.type === 'invocation' && event.requestId === traceId);
    expect(logged).toMatchObject({ name: 'charge', status: 500, stack: expect.stringContaining('charge.js:3:26') });

    const json = await svc(['invoke', 'reactor', 'charge', '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error).toMatchObject({
      status: 500,
      detail: expect.stringMatching(/^charge\.js:3:26: TypeError: /),
      trace_id: expect.any(String),
    });
  });

  test("a tokenize block the reactor's Application may not write: the error names that Application, raw is still printed", async () => {
    const { emu, svc } = await setup();
    const app = await createApp(emu, 'reader');
    const code = "module.exports = async () => ({ raw: { charge: 'ch_1' }, tokenize: { secret: 'kept' } });\n";
    const created = await emu.call('POST', '/reactors', {
      body: { name: 'charge', code, configuration: {}, application: { id: app.id } },
    });
    expect(created.status, created.text).toBe(201);
    const result = await svc(['invoke', 'reactor', 'charge']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ raw: { charge: 'ch_1' } });
    // The refusal is explained and kept by its trace id: the line ends with the command that shows it.
    expect(result.stderr).toMatch(
      new RegExp(
        `^Error: Tokenize block refused \\(403\\): Reactor charge ran, but the tokenize block of its result was refused: its Application reader \\(private, ${app.id}\\) ` +
          'lacks token:create\\. Grant that to reader, or bind another Application\\. The raw result is kept in "raw"\\. ' +
          '`svc explain [0-9a-f-]{36}` shows why\\.\n$',
      ),
    );
    const json = await svc(['invoke', 'reactor', 'charge', '--json']);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr).error).toMatchObject({
      status: 403,
      title: 'Tokenize block refused',
      raw: { charge: 'ch_1' },
    });
  });

  test('an unknown reactor name is an error', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc(['invoke', 'reactor', 'ghost', '--args', '{}']),
      1,
      /^Error: No reactor named "ghost"; `svc reactors list` shows them\.$/,
    );
  });

  test('--callback-url answers 202 pending, delivers a signed webhook, and `reactors result` shows it completed', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'v2', V2);
    const receiver = await startReceiver();
    const result = await svc(['invoke', 'reactor', 'v2', '--args', '{"x":"later"}', '--callback-url', receiver.url]);
    expect(result.code, result.stderr).toBe(0);
    const pending = JSON.parse(result.stdout) as { id: string; status: string };
    expect(pending).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' });
    expect(result.stdout).toBe(`${JSON.stringify(pending, null, 2)}\n`);
    expect(result.stderr).toContain(receiver.url);
    expect(result.stderr).toContain(`svc reactors result v2 ${pending.id}`);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);

    await receiver.next();
    const delivery = receiver.received[0]!;
    const payload = JSON.parse(delivery.body);
    expect(payload).toMatchObject({
      id: pending.id,
      reactor_id: reactor.id,
      status: 'completed',
      raw: { version: 2, x: 'later' },
    });
    const secret = (await svc('webhooks secret')).stdout.trim();
    expect(verifySignature(secret, delivery.body, String(delivery.headers['svc-signature']))).toBe(true);

    const polled = await svc(['reactors', 'result', 'v2', pending.id, '--json']);
    expect(polled.code, polled.stderr).toBe(0);
    expect(polled.json()).toMatchObject({
      id: pending.id,
      reactor_id: reactor.id,
      status: 'completed',
      raw: { version: 2, x: 'later' },
    });
    const api = await emu.call('GET', `/reactors/${reactor.id}/results/${pending.id}`, { key: emu.privateKey });
    expect(polled.stdout).toBe(`${JSON.stringify(api.body, null, 2)}\n`);
    // The human form is a view of the same answer: it was the JSON again.
    const human = await svc(['reactors', 'result', 'v2', pending.id]);
    expect(fieldsOf(human.stdout)).toMatchObject({ id: pending.id, status: 'completed', raw: '{' });
    expect(human.stdout).toContain('"x": "later"');
  });

  test('--wait polls an asynchronous invocation until it ran and prints it with its delivery status', async () => {
    const { emu, svc } = await setup();
    const reactor = await createReactor(emu, 'v2', V2);
    const receiver = await startReceiver();
    const result = await svc([
      'invoke',
      'reactor',
      'v2',
      '--args',
      '{"x":"waited"}',
      '--callback-url',
      receiver.url,
      '--wait',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toMatchObject({
      reactor_id: reactor.id,
      status: 'completed',
      raw: { version: 2, x: 'waited' },
      delivery: { status: expect.stringMatching(/^(pending|delivered)$/), event_id: expect.any(String) },
    });
    const human = await svc(['invoke', 'reactor', 'v2', '--callback-url', receiver.url, '--wait']);
    expect(human.code, human.stderr).toBe(0);
    // --wait now waits for the delivery too, and shows the result as a view.
    expect(fieldsOf(human.stdout)).toMatchObject({ status: 'completed', delivery: 'delivered (1 attempt, last: 204)' });
    expectOneLineError(
      await svc(['invoke', 'reactor', 'v2', '--wait']),
      2,
      /--wait applies to asynchronous invocations only/,
    );
  });

  test('--json with --callback-url prints only the 202 body, no note', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'v2', V2);
    const receiver = await startReceiver();
    const result = await svc(['invoke', 'reactor', 'v2', '--callback-url', receiver.url, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.json()).toEqual({ id: expect.any(String), status: 'pending' });
    await receiver.next();
  });

  test('reactors result of an unknown request id is a 404', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'v2', V2);
    const id = '00000000-0000-4000-8000-000000000000';
    const result = await svc(['reactors', 'result', 'v2', id]);
    expectOneLineError(result, 1, /^Error: Not found \(404\)/);
    expect(result.stderr).toContain(id);
  });

  test('--timeout-ms out of range, or without --callback-url, is a usage error before any request', async () => {
    const { emu, svc } = await setup();
    await createReactor(emu, 'v2', V2);
    const receiver = await startReceiver();
    expectOneLineError(
      await svc(['invoke', 'reactor', 'v2', '--args', '{}', '--callback-url', receiver.url, '--timeout-ms', '5']),
      2,
      'Error: --timeout-ms must be from 10000 to 210000, not "5".',
    );
    expectOneLineError(
      await svc(['invoke', 'reactor', 'v2', '--timeout-ms', '20000']),
      2,
      'Error: --timeout-ms applies to asynchronous invocations only: add --callback-url.',
    );
    expectOneLineError(
      await svc(['invoke', 'reactor', 'v2', '--timeout-ms', 'soon']),
      2,
      /^Error: --timeout-ms must be a whole number, not "soon"\.$/,
    );
    expect(receiver.received).toHaveLength(0);
  });

  // For a body schema `anyOf: [{type:'null'}, {...}]` (invokeReactorSchema), the null branch's type
  // error is not reported with the field's own ("body must be a null").
  test("the API's 400 for a bad timeout_ms names only timeout_ms", async () => {
    const { emu } = await setup();
    const reactor = await createReactor(emu, 'v2', V2);
    const result = await emu.call('POST', `/reactors/${reactor.id}/react`, {
      key: emu.privateKey,
      body: { callback_url: 'http://127.0.0.1:9/hook', timeout_ms: 5 },
    });
    expect(result.status).toBe(400);
    expect(result.body.errors).toEqual({ timeout_ms: ['must be at least 10000'] });
  });
});

describe('webhooks secret', () => {
  test('prints the tenant secret, the same as GET /_emulator/webhook-secret; --json as an object', async () => {
    // The bootstrap tenant's, whose secret the start reports.
    const { emu, svc } = await setup(startEmulator({ inMemory: true }));
    const api = await emu.call('GET', '/_emulator/webhook-secret');
    expect(api.status).toBe(200);
    const result = await svc('webhooks secret');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${api.body.secret}\n`);
    expect(api.body.secret).toMatch(/^whsec_/);
    expect(emu.started.webhookSecret).toBe(api.body.secret);
    const json = await svc('webhooks secret --json');
    expect(json.json()).toEqual({ secret: api.body.secret });
  });

  test('with only a private key: a 403 line', async () => {
    const { emu, cwd } = await setup();
    const result = await runSvc(['webhooks', 'secret', '--base-url', emu.url, '--api-key', emu.privateKey], { cwd });
    expectOneLineError(
      result,
      1,
      /^Error: Forbidden \(403\): The webhook signing secret is shown to management Applications only\. The key sent was the API key from --api-key \(key_local_pvt_….{4}\), standing in for the management key/,
    );
  });
});
