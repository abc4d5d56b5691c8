import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Page, Proxy } from '../../src/api/types.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { type CliResult, expectOneLineError, fieldsOf, runSvc, splitArgs } from '../helpers/cli.js';
import { http, type CallOptions, type HttpResult } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

const PROXY_KEY = /^proxy_local_[1-9A-HJ-NP-Za-km-z]{26}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CARD = { number: '4242424242424242', expiration_month: 12, expiration_year: 2099 };

/** Sends the destination what it was given (and the configuration), as JSON. */
const REQUEST_TRANSFORM = `module.exports = async function (req) {
  return { body: { seen: req.args.body, greeting: req.configuration.greeting || null }, headers: { 'Content-Type': 'application/json' } };
};
`;
const RESPONSE_TRANSFORM = `module.exports = async (req) => ({ body: { wrapped: req.args.body }, headers: { 'Content-Type': 'application/json' } });
`;

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** One emulator for the whole file (each test uses names of its own). */
let emulator: Emulator;
let url: string;
let managementKey: string;
let privateKey: string;

beforeAll(async () => {
  emulator = createEmulator({ port: 0, inMemory: true });
  const started = await emulator.ready;
  url = started.url;
  managementKey = started.bootstrap.keys.managementKey!;
  privateKey = started.bootstrap.keys.privateKey!;
});

afterAll(async () => {
  await emulator?.dispose();
});

function api<T = any>(method: string, urlPath: string, options: CallOptions = {}): Promise<HttpResult<T>> {
  return http<T>(url + urlPath, method, { ...options, key: options.key === undefined ? managementKey : options.key });
}

/** The CLI in-process against the emulator, with both keys, in a temp folder of its own. */
async function setup() {
  const cwd = await tempDir();
  const svc = (line: string | string[]): Promise<CliResult> => {
    const argv = typeof line === 'string' ? splitArgs(line) : line;
    return runSvc([...argv, '--base-url', url, '--management-key', managementKey, '--api-key', privateKey], { cwd });
  };
  const write = (file: string, text: string) => writeFile(path.join(cwd, file), text);
  return { cwd, svc, write };
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Answer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A real loopback destination recording every request; closed when the test ends. */
async function destination(answer: Answer = {}) {
  const requests: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      response.end(answer.body ?? '{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function createProxy(body: Record<string, unknown>): Promise<Proxy> {
  const created = await api<Proxy>('POST', '/proxies', {
    body: { name: unique('proxy'), destination_url: 'http://127.0.0.1:9', ...body },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function getProxy(id: string): Promise<Proxy> {
  const got = await api<Proxy>('GET', `/proxies/${id}`);
  expect(got.status, got.text).toBe(200);
  return got.body;
}

async function createApp(name: string, permissions = ['token:use']): Promise<{ id: string; name: string }> {
  const created = await api('POST', '/applications', { body: { name, type: 'private', permissions } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('proxies create', () => {
  it('with transforms from files, --configuration, --application by name and --no-require-auth', async () => {
    const { svc, write } = await setup();
    await write('request.js', REQUEST_TRANSFORM);
    await write('response.js', RESPONSE_TRANSFORM);
    const app = await createApp(unique('binder'));
    const name = unique('full');
    const result = await svc(
      `proxies create --name ${name} --destination-url http://127.0.0.1:9/base --request-transform request.js --response-transform response.js --configuration greeting=hi --configuration region=eu --application ${app.name} --no-require-auth`,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const fields = fieldsOf(result.stdout);
    expect(fields).toMatchObject({
      name,
      destination: 'http://127.0.0.1:9/base',
      'require auth': 'false',
      transforms: 'request, response',
      application: app.id,
      configuration: 'greeting, region',
    });
    expect(fields.id).toMatch(UUID);
    expect(fields.key).toMatch(PROXY_KEY);

    const stored = await getProxy(fields.id!);
    expect(stored).toMatchObject({
      name,
      key: fields.key,
      request_transform: { code: REQUEST_TRANSFORM },
      response_transform: { code: RESPONSE_TRANSFORM },
      configuration: { greeting: 'hi', region: 'eu' },
      application_id: app.id,
      require_auth: false,
    });
  });

  it('--json prints the Proxy with its key; require_auth defaults to true', async () => {
    const { svc } = await setup();
    const name = unique('json');
    const result = await svc(`proxies create --name ${name} --destination-url https://api.example.com --json`);
    expect(result.code, result.stderr).toBe(0);
    const proxy = result.json<Proxy>();
    expect(proxy).toMatchObject({
      name,
      destination_url: 'https://api.example.com',
      require_auth: true,
      request_transform: null,
      response_transform: null,
      configuration: null,
    });
    expect(proxy.key).toMatch(PROXY_KEY);
    expect(await getProxy(proxy.id)).toEqual(proxy);
  });

  it('needs --name and --destination-url (exit 2)', async () => {
    const { svc } = await setup();
    expectOneLineError(await svc('proxies create --name lonely'), 2, /--destination-url/);
    expectOneLineError(await svc('proxies create --destination-url http://127.0.0.1:9'), 2, /--name/);
  });

  it("reports the API's refusals in one line (exit 1): a bad URL, a transform that does not load, a missing file", async () => {
    const { svc, write } = await setup();
    const name = unique('refused');
    expectOneLineError(
      await svc(`proxies create --name ${name} --destination-url ftp://example.com`),
      2,
      /^Error: --destination-url must be an absolute http or https URL/,
    );
    await write('broken.js', 'module.exports = async (req) => {');
    expectOneLineError(
      await svc(`proxies create --name ${name} --destination-url http://127.0.0.1:9 --request-transform broken.js`),
      1,
      /^Error: .*\(422\)/,
    );
    expectOneLineError(
      await svc(`proxies create --name ${name} --destination-url http://127.0.0.1:9 --response-transform missing.js`),
      1,
      /^Error: Cannot read the code file .*missing\.js: no such file\.$/,
    );
    expect((await api<Page<Proxy>>('GET', `/proxies?name=${name}`)).body.data).toEqual([]);
  });

  it('a transform that does not load is named by its local path, line and column', async () => {
    const { svc, write } = await setup();
    const name = unique('located');
    await write('sign.js', 'module.exports = async (req) => req;\n');
    await write(
      'unwrap.js',
      '// unwrap\nmodule.exports = async (req) => { return req.args.body.x.y; };\nundefinedThing();\n',
    );
    const created = await svc(
      `proxies create --name ${name} --destination-url http://127.0.0.1:9 --request-transform sign.js --response-transform unwrap.js`,
    );
    expectOneLineError(created, 1, /^Error: Code does not load \(422\): unwrap\.js:3:1: TypeError: /);
    await write('broken.js', 'module.exports = async (req) => req.args.body );\n');
    const proxy = await createProxy({});
    const patched = await svc(`proxies patch ${proxy.id} --request-transform broken.js`);
    expectOneLineError(
      patched,
      1,
      "Error: Code does not load (422): broken.js:1:47: SyntaxError: Unexpected token ')'",
    );
  });
});

describe('proxies list, get', () => {
  it('lists as a table, filtered with --name, and as JSON', async () => {
    const { svc } = await setup();
    const prefix = unique('listed');
    const open = await createProxy({
      name: `${prefix}-open`,
      require_auth: false,
      request_transform: { code: REQUEST_TRANSFORM },
      destination_url: 'http://127.0.0.1:9/open',
    });
    const closed = await createProxy({ name: `${prefix}-closed`, destination_url: 'http://127.0.0.1:9/closed' });

    const table = await svc(`proxies list --name ${prefix}*`);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+DESTINATION\s+AUTH\s+TRANSFORMS$/);
    expect(lines).toHaveLength(3);
    const openLine = lines.find((line) => line.includes(open.id))!;
    expect(openLine).toMatch(new RegExp(`${open.name}\\s+http://127\\.0\\.0\\.1:9/open\\s+anonymous\\s+request$`));
    const closedLine = lines.find((line) => line.includes(closed.id))!;
    expect(closedLine).toMatch(/required\s+-$/);

    const json = await svc(`proxies list --name ${prefix}-c* --json`);
    expect(json.code, json.stderr).toBe(0);
    const page = json.json<Page<Proxy>>();
    expect(page.data.map((proxy) => proxy.id)).toEqual([closed.id]);
    expect(page.pagination.total_items).toBe(1);

    const none = await svc(`proxies list --name ${prefix}-nothing*`);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toBe('No proxies.\n');
  });

  it('get shows the proxy with its key, by name or id', async () => {
    const { svc } = await setup();
    const proxy = await createProxy({ configuration: { a: '1', b: '2' } });
    const byName = await svc(`proxies get ${proxy.name}`);
    expect(byName.code, byName.stderr).toBe(0);
    expect(fieldsOf(byName.stdout)).toMatchObject({
      id: proxy.id,
      name: proxy.name,
      key: proxy.key,
      'require auth': 'true',
      transforms: '(none)',
      application: '(none)',
      configuration: 'a, b',
    });
    const byId = await svc(`proxies get ${proxy.id} --json`);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.json()).toEqual(proxy);
    expectOneLineError(
      await svc(`proxies get ${unique('nobody')}`),
      1,
      /^Error: No proxy named ".*"; `svc proxies list` shows them\.$/,
    );
  });
});

describe('proxies update, patch, delete', () => {
  it('update replaces with the current values for the fields not given; the key stays', async () => {
    const { svc, write } = await setup();
    await write('request.js', REQUEST_TRANSFORM);
    await write('response.js', RESPONSE_TRANSFORM);
    const app = await createApp(unique('bound'));
    const proxy = await createProxy({
      request_transform: { code: REQUEST_TRANSFORM },
      response_transform: { code: RESPONSE_TRANSFORM },
      configuration: { a: '1' },
      application: { id: app.id },
      require_auth: false,
    });

    const moved = await svc(`proxies update ${proxy.name} --destination-url https://example.org/v2`);
    expect(moved.code, moved.stderr).toBe(0);
    expect(fieldsOf(moved.stdout)).toMatchObject({
      destination: 'https://example.org/v2',
      key: proxy.key,
      transforms: 'request, response',
    });
    expect(await getProxy(proxy.id)).toMatchObject({
      name: proxy.name,
      key: proxy.key,
      destination_url: 'https://example.org/v2',
      request_transform: { code: REQUEST_TRANSFORM },
      response_transform: { code: RESPONSE_TRANSFORM },
      configuration: { a: '1' },
      application_id: app.id,
      require_auth: false,
    });

    const removed = await svc(
      `proxies update ${proxy.id} --no-request-transform --configuration b=2 --require-auth --json`,
    );
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json()).toMatchObject({
      request_transform: null,
      response_transform: { code: RESPONSE_TRANSFORM },
      configuration: { b: '2' },
      require_auth: true,
      application_id: app.id,
    });

    const renamed = unique('renamed');
    expect(
      (await svc(`proxies update ${proxy.name} --name ${renamed} --no-application --request-transform request.js`))
        .code,
    ).toBe(0);
    expect(await getProxy(proxy.id)).toMatchObject({
      name: renamed,
      application_id: null,
      request_transform: { code: REQUEST_TRANSFORM },
      key: proxy.key,
    });
  });

  it('patch changes only what is given; --configuration merges and --unset removes', async () => {
    const { svc } = await setup();
    const proxy = await createProxy({
      configuration: { a: '1', b: '2' },
      request_transform: { code: REQUEST_TRANSFORM },
    });
    const result = await svc(`proxies patch ${proxy.name} --configuration c=3 --unset a --no-require-auth`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Patched proxy ${proxy.id} (configuration, require_auth).\n`);
    expect(await getProxy(proxy.id)).toMatchObject({
      name: proxy.name,
      configuration: { b: '2', c: '3' },
      require_auth: false,
      request_transform: { code: REQUEST_TRANSFORM },
    });

    const json = await svc(`proxies patch ${proxy.id} --no-request-transform --json`);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json()).toEqual({ id: proxy.id, patched: ['request_transform'] });
    expect((await getProxy(proxy.id)).request_transform).toBeNull();

    expectOneLineError(await svc(`proxies patch ${proxy.id}`), 2, /Nothing to change/);
    expectOneLineError(
      await svc(`proxies patch ${proxy.id} --destination-url not-a-url`),
      2,
      /^Error: --destination-url must be an absolute http or https URL/,
    );
    expect((await getProxy(proxy.id)).destination_url).toBe(proxy.destination_url);
  });

  it('delete removes the proxy; its key stops working', async () => {
    const { svc } = await setup();
    const proxy = await createProxy({});
    const result = await svc(`proxies delete ${proxy.name} --yes`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`Deleted proxy ${proxy.id}.\n`);
    expect((await api('GET', `/proxies/${proxy.id}`)).status).toBe(404);
    expectOneLineError(await svc(`invoke proxy ${proxy.key}`), 1, 'Error: Not found (404): No proxy has this key.');

    const other = await createProxy({});
    const json = await svc(`proxies rm ${other.id} --json --yes`);
    expect(json.json()).toEqual({ id: other.id, deleted: true });
    expectOneLineError(await svc(`proxies delete ${other.id} --yes`), 1, /^Error: Not found \(404\)/);
  });
});

describe('invoke proxy', () => {
  it("prints the destination's body on stdout, and its status on stderr", async () => {
    const { svc } = await setup();
    const target = await destination({ body: '{"hello":"world"}' });
    const proxy = await createProxy({ destination_url: target.url });
    const result = await svc(`invoke proxy ${proxy.key}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"hello":"world"}\n');
    expect(result.stderr).toBe('Destination answered 200 OK.\n');
    expect(target.requests).toMatchObject([{ method: 'GET', url: '/', body: '' }]);
  });

  it('sends -X, --path with its query, -H headers and -d data (JSON typed as such)', async () => {
    const { svc } = await setup();
    const target = await destination();
    const proxy = await createProxy({ destination_url: `${target.url}/base` });
    const result = await svc([
      'invoke',
      'proxy',
      proxy.name,
      '-X',
      'put',
      '--path',
      '/p?q=1&r=%20s',
      '-H',
      'X-One: 1',
      '-H',
      'Authorization: Bearer t:1',
      '-d',
      '{"a": 1}',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const [received] = target.requests;
    expect(received).toMatchObject({ method: 'PUT', url: '/base/p?q=1&r=%20s', body: '{"a": 1}' });
    expect(received!.headers).toMatchObject({
      'x-one': '1',
      authorization: 'Bearer t:1',
      'content-type': 'application/json',
    });
    expect(received!.headers['svc-api-key']).toBeUndefined();
    expect(received!.headers['svc-proxy-key']).toBeUndefined();
  });

  it('-d defaults to POST, text as text/plain; -H Content-Type wins', async () => {
    const { svc } = await setup();
    const target = await destination();
    const proxy = await createProxy({ destination_url: target.url });
    expect((await svc(['invoke', 'proxy', proxy.key, '-d', 'plain words'])).code).toBe(0);
    expect(
      (
        await svc([
          'invoke',
          'proxy',
          proxy.key,
          '-d',
          'a=1&b=2',
          '-H',
          'Content-Type: application/x-www-form-urlencoded',
        ])
      ).code,
    ).toBe(0);
    expect(target.requests.map((request) => [request.method, request.headers['content-type'], request.body])).toEqual([
      ['POST', 'text/plain', 'plain words'],
      ['POST', 'application/x-www-form-urlencoded', 'a=1&b=2'],
    ]);
  });

  it('-d @file sends the file, detokenized with the API key', async () => {
    const { svc, write } = await setup();
    const target = await destination();
    const proxy = await createProxy({ destination_url: target.url });
    const token = await api('POST', '/tokens', { key: privateKey, body: { type: 'card', data: CARD } });
    expect(token.status, token.text).toBe(201);
    await write('charge.json', JSON.stringify({ amount: 10, card: `{{ ${token.body.id} }}` }));
    const result = await svc(`invoke proxy ${proxy.key} -X POST --path /charges -d @charge.json`);
    expect(result.code, result.stderr).toBe(0);
    const sent = JSON.parse(target.requests[0]!.body);
    expect(sent.amount).toBe(10);
    expect(sent.card).toMatchObject(CARD);
    expectOneLineError(
      await svc(`invoke proxy ${proxy.key} -d @missing.json`),
      1,
      /^Error: Cannot read --data file .*missing\.json: no such file\.$/,
    );
  });

  it('-i prints the status line with its reason phrase, the headers (with svc-proxy-destination-status) and the body', async () => {
    const { svc } = await setup();
    const target = await destination({ status: 201, headers: { 'X-Custom': 'yes' }, body: '{"id":"ch_1"}' });
    const proxy = await createProxy({ destination_url: target.url });
    const result = await svc(`invoke proxy ${proxy.key} -i`);
    expect(result.code, result.stderr).toBe(0);
    const [head, body] = result.stdout.split('\n\n');
    const lines = head!.split('\n');
    expect(lines[0]).toBe('HTTP/1.1 201 Created');
    expect(lines).toContain('svc-proxy-destination-status: 201');
    expect(lines).toContain('x-custom: yes');
    expect(lines).toContain('content-type: application/json');
    expect(body).toBe('{"id":"ch_1"}\n');
  });

  it('--json prints {status, headers, body}', async () => {
    const { svc } = await setup();
    const target = await destination({ status: 202, headers: { 'X-Custom': 'j' }, body: '{"queued":true}' });
    const proxy = await createProxy({ destination_url: target.url });
    const result = await svc(`invoke proxy ${proxy.name} --json`);
    expect(result.code, result.stderr).toBe(0);
    const printed = result.json();
    expect(Object.keys(printed).sort()).toEqual(['body', 'headers', 'status']);
    expect(printed.status).toBe(202);
    expect(printed.body).toEqual({ queued: true });
    expect(printed.headers).toMatchObject({ 'svc-proxy-destination-status': '202', 'x-custom': 'j' });
  });

  it('a destination 404 is a result: exit 0 with its body', async () => {
    const { svc } = await setup();
    const target = await destination({ status: 404, body: '{"error":"no such charge"}' });
    const proxy = await createProxy({ destination_url: target.url });
    const result = await svc(`invoke proxy ${proxy.key} --path /charges/x`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"error":"no such charge"}\n');
    expect(result.stderr).toBe('Destination answered 404 Not Found.\n');
  });

  it('--fail: a destination 4xx or 5xx exits 22 (as curl does) with one line and no body; a 2xx is printed as ever', async () => {
    const { svc } = await setup();
    const missing = await destination({ status: 404, body: '{"error":"no such charge"}' });
    const proxy = await createProxy({ destination_url: missing.url });
    expectOneLineError(
      await svc(`invoke proxy ${proxy.key} --fail`),
      22,
      'Error: The destination answered 404 Not Found (--fail).',
    );
    expectOneLineError(
      await svc(`invoke proxy ${proxy.key} -f -i`),
      22,
      'Error: The destination answered 404 Not Found (--fail).',
    );
    const json = await svc(`invoke proxy ${proxy.key} --fail --json`);
    expect(json.code).toBe(22);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        type: 'urn:svc:cli:error',
        title: 'Error',
        detail: 'The destination answered 404 Not Found (--fail).',
        exit_code: 22,
      },
    });
    const broken = await destination({ status: 503, body: 'down' });
    const other = await createProxy({ destination_url: broken.url });
    expect((await svc(`invoke proxy ${other.key} --fail`)).code).toBe(22);

    const fine = await destination({ body: '{"ok":1}' });
    const ok = await createProxy({ destination_url: fine.url });
    const result = await svc(`invoke proxy ${ok.key} --fail`);
    expect([result.code, result.stdout]).toEqual([0, '{"ok":1}\n']);
  });

  it("sends the destination only the headers asked for: none of fetch's defaults (accept, user-agent, sec-fetch-mode...)", async () => {
    const { svc } = await setup();
    const target = await destination();
    const proxy = await createProxy({ destination_url: target.url });
    expect((await svc(['invoke', 'proxy', proxy.key, '-H', 'X-One: 1'])).code).toBe(0);
    expect((await svc(['invoke', 'proxy', proxy.key, '-d', '{"a":1}', '-H', 'Accept: text/csv'])).code).toBe(0);
    const [get, post] = target.requests;
    // What HTTP/1.1 needs (host, connection, content-length), the proxy's own loop guard, and the user's headers.
    expect(Object.keys(get!.headers).sort()).toEqual(['connection', 'host', 'svc-proxy-hop', 'x-one']);
    expect(Object.keys(post!.headers).sort()).toEqual([
      'accept',
      'connection',
      'content-length',
      'content-type',
      'host',
      'svc-proxy-hop',
    ]);
    expect(post!.headers.accept).toBe('text/csv');
  });

  it('a proxy error exits 1 with one line', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc('invoke proxy proxy_local_1111111111111111111111111a'),
      1,
      'Error: Not found (404): No proxy has this key.',
    );
    const json = await svc('invoke proxy proxy_local_1111111111111111111111111a --json');
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { status: 404, title: 'Not found', detail: 'No proxy has this key.' },
    });
  });

  it('--no-auth sends no API key: refused by a proxy that requires one, accepted by an anonymous one', async () => {
    const { svc } = await setup();
    const target = await destination({ body: 'anonymous ok' });
    const closed = await createProxy({ destination_url: target.url });
    expectOneLineError(
      await svc(`invoke proxy ${closed.key} --no-auth`),
      1,
      /^Error: Unauthenticated \(401\): .*SVC-API-KEY/,
    );
    expect(target.requests).toHaveLength(0);
    const open = await createProxy({ destination_url: target.url, require_auth: false });
    const result = await svc(`invoke proxy ${open.name} --no-auth`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('anonymous ok\n');
    expect(target.requests).toHaveLength(1);
  });

  it('refuses a malformed command line (exit 2) without calling anything', async () => {
    const { svc } = await setup();
    const target = await destination();
    const proxy = await createProxy({ destination_url: target.url });
    expectOneLineError(await svc(['invoke', 'proxy', proxy.key, '-H', 'bad']), 2, /-H takes 'Name: value'/);
    expectOneLineError(await svc(['invoke', 'proxy', proxy.key, '-H', ': no name']), 2, /-H takes/);
    expectOneLineError(
      await svc(['invoke', 'proxy', proxy.key, '-X', 'TRACE']),
      2,
      /-X must be one of GET, POST, PUT, PATCH, DELETE/,
    );
    expectOneLineError(
      await svc(['invoke', 'proxy', proxy.key, '--path', 'no-slash']),
      2,
      /--path must start with "\/"/,
    );
    expect(target.requests).toHaveLength(0);
  });

  it('goes through the transforms like any caller', async () => {
    const { svc } = await setup();
    const target = await destination({ body: '{"from":"destination"}' });
    const proxy = await createProxy({
      destination_url: target.url,
      request_transform: { code: REQUEST_TRANSFORM },
      response_transform: { code: RESPONSE_TRANSFORM },
      configuration: { greeting: 'hey' },
    });
    const result = await svc(['invoke', 'proxy', proxy.name, '-d', '{"x":1}', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(target.requests[0]!.body)).toEqual({ seen: { x: 1 }, greeting: 'hey' });
    expect(result.json().body).toEqual({ wrapped: { from: 'destination' } });
  });
});

describe('invoke proxy: naming the proxy', () => {
  it('by key, by id or by exact name (the name resolved with the management key)', async () => {
    const { svc } = await setup();
    const target = await destination({ body: 'found' });
    const proxy = await createProxy({ name: unique('named'), destination_url: target.url });
    for (const handle of [proxy.key, proxy.id, proxy.name]) {
      const result = await svc(['invoke', 'proxy', handle, '--path', `/${handle.length}`]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('found\n');
    }
    expect(target.requests.map((request) => request.url)).toEqual([
      `/${proxy.key.length}`,
      `/${proxy.id.length}`,
      `/${proxy.name.length}`,
    ]);
    expectOneLineError(
      await svc(`invoke proxy ${unique('nobody')}`),
      1,
      /^Error: No proxy named ".*"; `svc proxies list` shows them\.$/,
    );
  });
});
