import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import type { EmulatorOptions } from '../../src/emulator/index.js';
import { type CliResult, expectOneLineError, fieldsOf, runSvc, splitArgs } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };
const MASKED_CARD = { number: 'XXXXXXXXXXXX4242', expiration_month: 12, expiration_year: 2099 };

/** A real emulator, and the CLI run against it with --base-url and the bootstrap private key. */
async function setup(options: EmulatorOptions = {}) {
  const emu = await startEmulator({ inMemory: true, ...options });
  const cwd = await tempDir();
  const svc = (line: string | string[], extra: { stdin?: string } = {}): Promise<CliResult> => {
    const argv = typeof line === 'string' ? splitArgs(line) : line;
    return runSvc([...argv, '--base-url', emu.url, '--api-key', emu.privateKey], { cwd, ...extra });
  };
  /** The API, with the same private key. */
  const api = (method: string, urlPath: string, body?: unknown, transaction?: string) =>
    emu.call(method, urlPath, {
      key: emu.privateKey,
      body,
      ...(transaction && { headers: { 'svc-transaction-id': transaction } }),
    });
  return { emu, cwd, svc, api };
}

/** The data of a token as the API reveals it (detokenize needs token:use, which the private key has). */
async function revealed(api: Awaited<ReturnType<typeof setup>>['api'], id: string): Promise<unknown> {
  const result = await api('POST', '/detokenize', `{{ ${id} }}`);
  expect(result.status, result.text).toBe(200);
  return result.body;
}

async function listedIds(emu: TestEmulator): Promise<string[]> {
  const result = await emu.call('GET', '/tokens?size=100', { key: emu.privateKey });
  return (result.body.data as { id: string }[]).map((token) => token.id);
}

describe('tokens create', () => {
  test('a card: human output shows the fields and the masked data, never the number', async () => {
    const { svc, api } = await setup();
    const result = await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const fields = fieldsOf(result.stdout);
    expect(fields).toMatchObject({ type: 'card', containers: '/pci/high/', metadata: '(none)', expires: 'never' });
    expect(fields.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(fields.created).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // The data is the indented JSON of the mask, continued under the value column.
    expect(result.stdout).toContain(
      ['data        {', '              "number": "XXXXXXXXXXXX4242",', '              "expiration_month": 12,'].join(
        '\n',
      ),
    );
    expect(result.stdout).not.toContain(CARD.number);
    expect(result.stdout).not.toMatch(/\u001b\[/);

    expect(await revealed(api, fields.id!)).toEqual(CARD);
  });

  test('--json prints exactly the API object', async () => {
    const { svc, api } = await setup();
    const result = await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD), '--json']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const token = result.json();
    expect(token).toMatchObject({
      type: 'card',
      containers: ['/pci/high/'],
      data: MASKED_CARD,
      metadata: {},
      expires_at: null,
    });
    const stored = await api('GET', `/tokens/${token.id}`);
    expect(result.stdout).toBe(`${JSON.stringify(stored.body, null, 2)}\n`);
  });

  test('for type token a bare string is taken as is, and JSON as JSON', async () => {
    const { svc, api } = await setup();
    const bare = await svc(['tokens', 'create', '--data', 'my secret', '--json']);
    expect(bare.code).toBe(0);
    expect(bare.json()).toMatchObject({ type: 'token', containers: ['/general/high/'] });
    expect(await revealed(api, bare.json().id)).toBe('my secret');

    const object = await svc([
      'tokens',
      'create',
      '--type',
      'token',
      '--data',
      '{"ssn":"123-45-6789","tags":[1,2]}',
      '--json',
    ]);
    expect(object.code).toBe(0);
    expect(await revealed(api, object.json().id)).toEqual({ ssn: '123-45-6789', tags: [1, 2] });
  });

  test('a token without a mask read with plain permissions shows "(redacted)"', async () => {
    const { svc } = await setup();
    const result = await svc(['tokens', 'create', '--data', 'my secret']);
    expect(result.code).toBe(0);
    expect(fieldsOf(result.stdout).data).toBe('(redacted)');
    expect(result.stdout).not.toContain('my secret');
  });

  test('--data @file reads the file relative to the working folder', async () => {
    const { cwd, svc, api } = await setup();
    await writeFile(path.join(cwd, 'card.json'), JSON.stringify(CARD));
    const result = await svc('tokens create --type card --data @card.json --json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json().data).toEqual(MASKED_CARD);
    expect(await revealed(api, result.json().id)).toEqual(CARD);
  });

  test('--data - reads stdin', async () => {
    const { svc, api } = await setup();
    const result = await svc('tokens create --type card --data - --json', { stdin: JSON.stringify(CARD) });
    expect(result.code, result.stderr).toBe(0);
    expect(await revealed(api, result.json().id)).toEqual(CARD);

    const text = await svc('tokens create --data - --json', { stdin: 'piped secret' });
    expect(text.code).toBe(0);
    expect(await revealed(api, text.json().id)).toBe('piped secret');
  });

  test('--id, --container (repeatable), --metadata k=v (repeatable) and --mask are sent', async () => {
    const { svc, api } = await setup();
    const result = await svc([
      'tokens',
      'create',
      '--data',
      'secret',
      '--id',
      'my-token',
      '--container',
      '/General/Low/',
      '--container',
      '/audit/',
      '--metadata',
      'owner=jane',
      '--metadata',
      'query=a=b',
      '--mask',
      '"s****t"',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const token = result.json();
    expect(token).toMatchObject({
      id: 'my-token',
      type: 'token',
      containers: ['/general/low/', '/audit/'],
      metadata: { owner: 'jane', query: 'a=b' },
      data: 's****t',
    });
    expect((await api('GET', '/tokens/my-token')).body).toEqual(token);
    expect(await revealed(api, 'my-token')).toBe('secret');

    const human = await svc('tokens get my-token');
    expect(fieldsOf(human.stdout)).toMatchObject({
      id: 'my-token',
      containers: '/general/low/, /audit/',
      data: '"s****t"',
      metadata: '{"owner":"jane","query":"a=b"}',
    });
  });

  test('--expires-at is sent and shown', async () => {
    const { svc } = await setup();
    const result = await svc('tokens create --data x --expires-at 2099-01-02T03:04:05Z');
    expect(result.code, result.stderr).toBe(0);
    expect(fieldsOf(result.stdout).expires).toBe('2099-01-02T03:04:05.000Z');
  });
});

describe('tokens create errors', () => {
  test('invalid JSON in --data for a card is a usage error in one line', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc(['tokens', 'create', '--type', 'card', '--data', '{"number":']),
      2,
      /^Error: --data is not valid JSON \(.+\)\.$/,
    );
    expectOneLineError(
      await svc(['tokens', 'create', '--mask', '{nope', '--data', 'x']),
      2,
      /^Error: --mask is not valid JSON/,
    );
    expect(await listedIds(emu)).toEqual([]);
  });

  test('--metadata without "=" is a usage error and nothing is created', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc('tokens create --data x --metadata novalue'),
      2,
      /^Error: --metadata takes KEY=VALUE, not "novalue"\.$/,
    );
    expectOneLineError(await svc('tokens create --data x --metadata =v'), 2, /^Error: --metadata takes KEY=VALUE/);
    expect(await listedIds(emu)).toEqual([]);
  });

  test('a bad --type choice is a usage error', async () => {
    const { svc } = await setup();
    const result = await svc('tokens create --type cheque --data x');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cheque/);
  });

  test('a 400 from the API names the field on one line, nothing on stdout', async () => {
    const { emu, svc } = await setup();
    const result = await svc([
      'tokens',
      'create',
      '--type',
      'card',
      '--data',
      JSON.stringify({ ...CARD, number: '4242424242424241' }),
    ]);
    expectOneLineError(
      result,
      1,
      /^Error: Validation failed \(400\): --data \(data\.number\): is not a valid card number \(Luhn check failed\)$/,
    );
    expect(await listedIds(emu)).toEqual([]);
  });

  test('with --json an API error is the problem as JSON on stderr', async () => {
    const { svc } = await setup();
    const result = await svc([
      'tokens',
      'create',
      '--type',
      'card',
      '--data',
      JSON.stringify({ ...CARD, expiration_month: 13 }),
      '--json',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr);
    expect(error).toMatchObject({
      status: 400,
      title: 'Validation failed',
      errors: { 'data.expiration_month': ['must be an integer from 1 to 12'] },
    });
  });

  test('--data @missing.json names the file', async () => {
    const { cwd, svc } = await setup();
    const result = await svc('tokens create --data @missing.json');
    expectOneLineError(result, 1, /^Error: Cannot read --data file .*missing\.json: no such file\.$/);
    expect(result.stderr).toContain(path.join(cwd, 'missing.json'));
  });

  test('a custom id that exists is a 400 naming the id', async () => {
    const { svc } = await setup();
    expect((await svc('tokens create --data x --id dup')).code).toBe(0);
    expectOneLineError(
      await svc('tokens create --data y --id dup'),
      1,
      /^Error: Validation failed \(400\): --id: a token with id dup already exists$/,
    );
  });
});

describe('tokens get, list, delete', () => {
  test('get prints the fields; --json exactly the API object', async () => {
    const { svc, api } = await setup();
    const id = (await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD), '--json'])).json()
      .id as string;
    const human = await svc(['tokens', 'get', id]);
    expect(human.code).toBe(0);
    expect(fieldsOf(human.stdout)).toMatchObject({ id, type: 'card', containers: '/pci/high/', data: '{' });
    expect(human.stdout).toContain('"number": "XXXXXXXXXXXX4242"');

    const json = await svc(['tokens', 'get', id, '--json']);
    expect(json.stdout).toBe(`${JSON.stringify((await api('GET', `/tokens/${id}`)).body, null, 2)}\n`);
  });

  test('get of an unknown token is a 404 on one line', async () => {
    const { svc } = await setup();
    expectOneLineError(await svc('tokens get nope'), 1, /^Error: Not found \(404\): No token with id nope\.$/);
  });

  test('list: a plain table with the masked data, and --json the API page', async () => {
    const { svc, api } = await setup();
    const card = (await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD), '--json'])).json();
    const secret = (await svc('tokens create --data hidden --json')).json();
    const masked = (
      await svc(['tokens', 'create', '--data', 'x', '--mask', '"xx"', '--container', '/general/low/', '--json'])
    ).json();

    const table = await svc('tokens list');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+CONTAINERS\s+DATA\s+CREATED$/);
    expect(lines).toHaveLength(4);
    const row = (id: string) => lines.find((line) => line.startsWith(id))!;
    expect(row(card.id)).toMatch(
      /\scard\s+\/pci\/high\/\s+\{"number":"XXXXXXXXXXXX4242","expiration_month":12,"expiration_year":2099\}\s+\d{4}-/,
    );
    expect(row(secret.id)).toMatch(/\stoken\s+\/general\/high\/\s+\(redacted\)\s/);
    expect(row(masked.id)).toMatch(/\stoken\s+\/general\/low\/\s+"xx"\s/);
    expect(table.stdout).not.toContain(CARD.number);
    expect(table.stdout).not.toContain('hidden');

    const json = await svc('tokens list --json');
    expect(json.stdout).toBe(`${JSON.stringify((await api('GET', '/tokens')).body, null, 2)}\n`);
    expect(json.json().pagination.total_items).toBe(3);
  });

  test('list --type and --container filter', async () => {
    const { svc } = await setup();
    const card = (await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD), '--json'])).json();
    const low = (await svc('tokens create --data a --container /general/low/ --json')).json();
    const high = (await svc('tokens create --data b --json')).json();

    const ids = async (line: string) => ((await svc(line)).json().data as { id: string }[]).map((token) => token.id);
    expect(await ids('tokens list --type card --json')).toEqual([card.id]);
    expect(await ids('tokens list --type token --json')).toEqual([low.id, high.id]);
    expect(await ids('tokens list --container /general/ --json')).toEqual([low.id, high.id]);
    expect(await ids('tokens list --container /general/low/ --json')).toEqual([low.id]);
    expect(await ids('tokens list --container /pci/ --type token --json')).toEqual([]);
  });

  test('an empty list says so on stderr and prints nothing on stdout', async () => {
    const { svc } = await setup();
    const result = await svc('tokens list');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('No tokens.\n');
  });

  test('delete removes the token; again is a 404', async () => {
    const { svc, api } = await setup();
    const id = (await svc('tokens create --data x --json')).json().id as string;
    const result = await svc(['tokens', 'delete', id, '--yes']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Deleted token ${id}.\n`);
    expect((await api('GET', `/tokens/${id}`)).status).toBe(404);
    expectOneLineError(await svc(['tokens', 'delete', id, '--yes']), 1, /^Error: Not found \(404\)/);

    const other = (await svc('tokens create --data y --json')).json().id as string;
    const json = await svc(['tokens', 'rm', other, '--json', '--yes']);
    expect(json.json()).toEqual({ id: other, deleted: true });
    expect((await api('GET', `/tokens/${other}`)).status).toBe(404);
  });
});

describe('tokenize and detokenize', () => {
  test('tokenize --data prints the API JSON: ids for leaves, token objects for {type, data}', async () => {
    const { svc, api } = await setup();
    const value = { name: 'Jane', card: { type: 'card', data: CARD } };
    const result = await svc(['tokenize', '--data', JSON.stringify(value)]);
    expect(result.code, result.stderr).toBe(0);
    const out = result.json();
    expect(result.stdout).toBe(`${JSON.stringify(out, null, 2)}\n`);
    expect(out.card).toMatchObject({ type: 'card', data: MASKED_CARD });
    expect(out.card).toEqual((await api('GET', `/tokens/${out.card.id}`)).body);
    expect(await revealed(api, out.name)).toBe('Jane');
    expect(await revealed(api, out.card.id)).toEqual(CARD);
    // --json prints the same document.
    const json = await svc(['tokenize', '--data', '["a"]', '--json']);
    expect(json.json()).toEqual([expect.any(String)]);
  });

  test('tokenize --data @file', async () => {
    const { cwd, svc, api } = await setup();
    await writeFile(path.join(cwd, 'value.json'), JSON.stringify({ ssn: '123-45-6789', nested: [true, 3] }));
    const result = await svc('tokenize --data @value.json');
    expect(result.code, result.stderr).toBe(0);
    const out = result.json();
    expect(await revealed(api, out.ssn)).toBe('123-45-6789');
    expect(await revealed(api, out.nested[0])).toBe(true);
    expect(await revealed(api, out.nested[1])).toBe(3);
  });

  test('tokenize reads stdin when --data is absent', async () => {
    const { svc, api } = await setup();
    const result = await svc('tokenize', { stdin: JSON.stringify({ email: 'jane@example.com' }) });
    expect(result.code, result.stderr).toBe(0);
    expect(await revealed(api, result.json().email)).toBe('jane@example.com');
  });

  test('tokenize with nothing to read, or with invalid JSON, is a usage error', async () => {
    const { emu, svc } = await setup();
    expectOneLineError(
      await svc('tokenize'),
      2,
      /^Error: Give --data as JSON, @file or - \(stdin\), or pipe JSON in\.$/,
    );
    expectOneLineError(await svc('tokenize --data {oops'), 2, /^Error: --data is not valid JSON/);
    expect(await listedIds(emu)).toEqual([]);
  });

  test('a tokenize with one bad card writes nothing and names the path of the field', async () => {
    const { emu, svc } = await setup();
    const value = { ok: 'fine', card: { type: 'card', data: { ...CARD, number: '123' } } };
    expectOneLineError(
      await svc(['tokenize', '--data', JSON.stringify(value)]),
      1,
      /^Error: Validation failed \(400\): card\.data\.number: must be 12 to 19 digits$/,
    );
    expect(await listedIds(emu)).toEqual([]);
  });

  test('detokenize reveals the card JSON', async () => {
    const { svc } = await setup();
    const id = (await svc(['tokens', 'create', '--type', 'card', '--data', JSON.stringify(CARD), '--json'])).json()
      .id as string;
    const result = await svc(['detokenize', '--data', JSON.stringify({ card: `{{ ${id} }}`, text: `card {{${id}}}` })]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual({ card: CARD, text: `card ${JSON.stringify(CARD)}` });
    expect(result.stdout).toBe(`${JSON.stringify({ card: CARD, text: `card ${JSON.stringify(CARD)}` }, null, 2)}\n`);
  });

  test('detokenize of an unknown token is a 400 naming it', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc(['detokenize', '--data', '"{{ ghost }}"']),
      1,
      /^Error: Unknown token \(400\): Token ghost in a detokenization expression does not exist\.$/,
    );
  });
});

describe('transactions', () => {
  test('create shows the open transaction; get and --json match the API', async () => {
    const { svc, api } = await setup();
    const human = await svc('transactions create');
    expect(human.code, human.stderr).toBe(0);
    const fields = fieldsOf(human.stdout);
    expect(fields.status).toBe('open');
    expect(Date.parse(fields.expires!) - Date.parse(fields.created!)).toBe(60 * 60 * 1000);
    const stored = await api('GET', `/transactions/${fields.id}`);
    expect(stored.status).toBe(200);

    const json = await svc(['transactions', 'get', fields.id!, '--json']);
    expect(json.stdout).toBe(`${JSON.stringify(stored.body, null, 2)}\n`);
    const created = await svc('transactions create --json');
    expect(created.json()).toEqual((await api('GET', `/transactions/${created.json().id}`)).body);
  });

  test('tokens create --transaction stages: invisible until commit', async () => {
    const { svc } = await setup();
    const tx = (await svc('transactions create --json')).json().id as string;
    const staged = await svc([
      'tokens',
      'create',
      '--type',
      'card',
      '--data',
      JSON.stringify(CARD),
      '--transaction',
      tx,
      '--json',
    ]);
    expect(staged.code, staged.stderr).toBe(0);
    const id = staged.json().id as string;

    expectOneLineError(
      await svc(['tokens', 'get', id]),
      1,
      new RegExp(`^Error: Not found \\(404\\): No token with id ${id}\\.$`),
    );
    expect((await svc('tokens list --json')).json().data).toEqual([]);
    const inside = await svc(['tokens', 'get', id, '--transaction', tx, '--json']);
    expect(inside.code).toBe(0);
    expect(inside.json()).toEqual(staged.json());
    expect((await svc(['tokens', 'list', '--transaction', tx, '--json'])).json().data).toEqual([staged.json()]);

    const commit = await svc(['transactions', 'commit', tx]);
    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.stdout).toBe(`Committed transaction ${tx}.\n`);
    expect((await svc(['tokens', 'get', id, '--json'])).json()).toEqual(staged.json());
    expect((await svc(['transactions', 'get', tx, '--json'])).json().status).toBe('committed');
    expect(fieldsOf((await svc(['transactions', 'get', tx])).stdout).status).toBe('committed');

    // Not open any more: a second commit, a rollback and a staged write are refused.
    expectOneLineError(
      await svc(['transactions', 'commit', tx]),
      1,
      new RegExp(`^Error: Conflict \\(409\\): Transaction ${tx} is committed, not open\\.$`),
    );
    expectOneLineError(await svc(['transactions', 'rollback', tx, '--yes']), 1, /^Error: Conflict \(409\)/);
    expectOneLineError(
      await svc(['tokens', 'create', '--data', 'late', '--transaction', tx]),
      1,
      /^Error: Conflict \(409\)/,
    );
  });

  test('rollback discards staged writes, deletes included; tokenize --transaction stages too', async () => {
    const { svc, emu } = await setup();
    const kept = (await svc('tokens create --data keep --json')).json().id as string;
    const tx = (await svc('transactions create --json')).json().id as string;
    const staged = (await svc(['tokens', 'create', '--data', 'gone', '--transaction', tx, '--json'])).json()
      .id as string;
    const tokenized = (await svc(['tokenize', '--data', '["t"]', '--transaction', tx])).json() as string[];
    const deleted = await svc(['tokens', 'delete', kept, '--transaction', tx, '--yes']);
    expect(deleted.stdout).toBe(`Deleted token ${kept} (staged in transaction ${tx}).\n`);
    expect(await listedIds(emu)).toEqual([kept]);

    const rollback = await svc(['transactions', 'rollback', tx, '--json', '--yes']);
    expect(rollback.code).toBe(0);
    expect(rollback.json()).toEqual({ id: tx, status: 'rolled_back' });
    expect(await listedIds(emu)).toEqual([kept]);
    for (const id of [staged, ...tokenized]) expect((await svc(['tokens', 'get', id])).code).toBe(1);
    expect((await svc(['transactions', 'get', tx, '--json'])).json().status).toBe('rolled_back');

    const human = await svc(['transactions', 'rollback', (await svc('transactions create --json')).json().id, '--yes']);
    expect(human.stdout).toMatch(/^Rolled back transaction [0-9a-f-]{36}\.\n$/);
  });

  test('commit --json prints the id and the new status', async () => {
    const { svc } = await setup();
    const tx = (await svc('transactions create --json')).json().id as string;
    const result = await svc(['transactions', 'commit', tx, '--json']);
    expect(result.json()).toEqual({ id: tx, status: 'committed' });
  });

  test('an unknown or malformed transaction id is an error on one line', async () => {
    const { svc } = await setup();
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectOneLineError(
      await svc(['transactions', 'commit', unknown]),
      1,
      /^Error: Not found \(404\): No transaction with id 0{8}-/,
    );
    expectOneLineError(await svc('transactions get nope'), 1, /^Error: Validation failed \(400\): id: /);
    expectOneLineError(
      await svc(['tokens', 'create', '--data', 'x', '--transaction', unknown]),
      1,
      /^Error: Not found \(404\)/,
    );
  });

  test('on the standard tier, transactions create fails naming the Enterprise tier', async () => {
    const { svc } = await setup({ tier: 'standard' });
    const result = await svc('transactions create');
    expectOneLineError(
      result,
      1,
      /^Error: Enterprise tier required \(403\): Transactions is an Enterprise-tier feature; .*--tier enterprise/,
    );
    // Token writes without a transaction still work there.
    expect((await svc('tokens create --data x')).code).toBe(0);
  });
});

describe('input edge cases', () => {
  // src/cli/commands/tokens/create.ts: with no --data and a stdin that is not a TTY but empty
  // (CI, `< /dev/null`), readInput returns '' rather than undefined, JSON.parse('') fails, and
  // for type token the empty string becomes the data: a token is created instead of a usage error.
  test('tokens create without --data and with nothing piped is a usage error', async () => {
    const { emu, svc } = await setup();
    const result = await svc('tokens create');
    expect(await listedIds(emu)).toEqual([]); // actual: one token holding ""
    expectOneLineError(result, 2, /^Error: Give the token data with --data/);
  });
});
