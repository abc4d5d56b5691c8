/**
 * `svc apply` killed (SIGKILL, as a real process) while it creates Applications: every key the server
 * answered with is in .svc/keys.json before the apply moves on, and the next apply recovers or names
 * each key with the command that issues a new one (issue 26, item 3).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';

const APPS = ['a1', 'a2', 'a3', 'a4', 'a5'];
const appsYaml = (type: string, permission: string) =>
  `applications:\n${APPS.map((name) => `  ${name}:\n    type: ${type}\n    permissions: [${permission}]\n`).join('')}`;
/** Management Applications: their keys can read their own Application (GET /applications/key). */
const SVC_YAML = appsYaml('management', 'application:read');

/** Code whose load keeps the emulator's sandbox busy for a while. */
const SLOW_REACTOR =
  'const until = Date.now() + 1500; while (Date.now() < until);\nmodule.exports = async () => ({ raw: {} });\n';

interface HeldAnswer {
  name: string;
  release(): void;
}

/**
 * A loopback proxy in front of the emulator: every request goes through, but the answers of the
 * Application creations after the first `answered` are held (the Application exists on the
 * server; the client never hears of it): what a kill between the server's answer and the key's
 * save leaves.
 */
async function holdingProxy(emu: TestEmulator, answered: number) {
  const created: string[] = [];
  const held: HeldAnswer[] = [];
  const holding = { on: true };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = new URL(req.url ?? '/', emu.url);
      const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => parts.push(chunk));
        answer.on('end', () => {
          const send = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(parts));
          };
          const isCreate = req.method === 'POST' && target.pathname === '/applications' && answer.statusCode === 201;
          if (!isCreate) return send();
          const name = (JSON.parse(body.toString()) as { name: string }).name;
          created.push(name);
          if (created.length <= answered || !holding.on) return send();
          held.push({ name, release: send });
        });
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on('connection', (socket) => onTestFinished(() => void socket.destroy()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, created, held, passAll: () => (holding.on = false) };
}

async function project(): Promise<string> {
  const cwd = await tempDir();
  await mkdir(path.join(cwd, 'reactors'), { recursive: true });
  await writeFile(path.join(cwd, 'svc.yaml'), SVC_YAML);
  return cwd;
}

async function savedKeys(cwd: string, emu: TestEmulator): Promise<Record<string, { id: string; key?: string }>> {
  try {
    const document = JSON.parse(await readFile(path.join(cwd, '.svc', 'keys.json'), 'utf8'));
    return document.targets?.[Object.keys(document.targets)[0]!]?.[emu.tenantId] ?? {};
  } catch {
    return {};
  }
}

describe('svc apply killed while it creates Applications', () => {
  test('each answered key is saved before the apply goes on; the next apply names each lost key with its regenerate command', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await project();
    const proxy = await holdingProxy(emu, 3);
    const first = spawnSvc(['apply', '--base-url', proxy.url, '--management-key', emu.managementKey], { cwd });

    // Three answered, two created on the server but never answered: the apply waits for those two.
    await eventually(() => expect(proxy.held.length).toBe(2), 20_000);
    const answered = proxy.created.slice(0, 3);
    await eventually(
      async () => expect(Object.keys(await savedKeys(cwd, emu)).sort()).toEqual(answered.sort()),
      20_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;

    const saved = await savedKeys(cwd, emu);
    for (const name of answered) {
      const check = await emu.call('GET', '/applications/key', { key: saved[name]!.key! });
      expect(check.status).toBe(200);
      expect(check.body.name).toBe(name);
    }

    // The same target (state and keys are kept by base URL): the proxy now answers everything.
    proxy.passAll();
    const again = spawnSvc(['apply', '--base-url', proxy.url, '--management-key', emu.managementKey], { cwd });
    const { code } = await again.exited;
    const output = `${again.lines.join('\n')}\n${again.stderr()}`;
    expect(code, output).toBe(0);
    const apps = (await emu.call('GET', '/applications?size=100')).body.data as { name: string; id: string }[];
    // Nothing made twice; the two whose keys never reached svc are named, with the command that issues new ones.
    for (const name of APPS) expect(apps.filter((app) => app.name === name)).toHaveLength(1);
    // The answered ones are svc's already (the state has them); the two others are adopted, with the warning.
    for (const name of answered) expect(output).not.toContain(`adopt applications.${name} `);
    for (const { name } of proxy.held) {
      expect(output).toContain(`svc applications regenerate ${name}`);
      expect(output).toMatch(new RegExp(`applications\\.${name}.*key.*lost`));
    }
    // The answered keys are kept; nothing else claims to be a key.
    const after = await savedKeys(cwd, emu);
    for (const name of answered) expect(after[name]!.key).toBe(saved[name]!.key);
    for (const { name } of proxy.held) expect(after[name]?.key).toBeUndefined();

    // keys.json says so too, where the key would be: the message need not have been read.
    for (const { name } of proxy.held)
      expect(after[name] as { lost?: string }).toMatchObject({
        lost: expect.stringContaining(`svc applications regenerate ${name}`),
      });
  }, 60_000);

  test('Ctrl-C waits for the creates under way: every key the server made is saved, and none more start', async () => {
    const emu = await startEmulator({ inMemory: true });
    const cwd = await project();
    const proxy = await holdingProxy(emu, 1);
    const first = spawnSvc(['apply', '--base-url', proxy.url, '--management-key', emu.managementKey], { cwd });
    await eventually(() => expect(proxy.held.length).toBeGreaterThan(0), 20_000);
    first.child.kill('SIGINT');
    await eventually(() => expect(first.stderr()).toMatch(/Interrupted: finishing the changes under way/), 20_000);
    // The answers come: their keys are saved, and the apply ends with 130.
    const heldNow = proxy.held.map(({ name }) => name);
    proxy.passAll();
    for (const { release } of proxy.held) release();
    const { code } = await first.exited;
    expect(code, first.stderr()).toBe(130);
    const saved = await savedKeys(cwd, emu);
    for (const name of [...proxy.created.slice(0, 1), ...heldNow]) {
      const check = await emu.call('GET', '/applications/key', { key: saved[name]!.key! });
      expect(check.body.name).toBe(name);
    }
    // Nothing was started after the interrupt: every Application on the server has its key.
    const apps = (await emu.call('GET', '/applications?size=100')).body.data as { name: string }[];
    for (const name of APPS.filter((app) => apps.some((made) => made.name === app)))
      expect(saved[name]?.key, name).toBeDefined();
  }, 60_000);

  test('serve --config killed right after a save created Applications: each one said created has its key saved', async () => {
    const cwd = await project();
    await writeFile(
      path.join(cwd, 'svc.yaml'),
      'applications:\n  a0:\n    type: private\n    permissions: [token:use]\n',
    );
    const serve = spawnSvc(['serve', '--port', '0', '--config', 'svc.yaml', '--log-format', 'json'], { cwd });
    const reloads = () =>
      serve.lines
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.event === 'reload');
    // The apply at start is done (and the file watched) before the save.
    await serve.waitForLine((line) => line.includes('"target":"applications.a0 created"'), 20_000);
    // One save that creates five Applications and a reactor of the first whose code takes a while to
    // load (the apply is still under way); killed as soon as an Application is said to be created.
    await writeFile(path.join(cwd, 'reactors', 'slow.js'), SLOW_REACTOR);
    await writeFile(
      path.join(cwd, 'svc.yaml'),
      `${appsYaml('private', 'token:use')}reactors:\n  slow:\n    code: reactors/slow.js\n    application: a1\n`,
    );
    await serve.waitForLine((line) => /"target":"applications\.a[1-5] created"/.test(line), 20_000);
    serve.child.kill('SIGKILL');
    await serve.exited;

    const announced = reloads()
      .map((line) => /^applications\.(a[1-5]) created$/.exec(String(line.target))?.[1])
      .filter((name): name is string => name !== undefined);
    expect(announced.length).toBeGreaterThan(0);
    const document = JSON.parse(await readFile(path.join(cwd, '.svc', 'keys.json'), 'utf8'));
    const url = Object.keys(document.targets)[0]!;
    const keys = Object.values(document.targets[url])[0] as Record<string, { key?: string }>;
    for (const name of announced) expect(keys[name]?.key, name).toMatch(/^key_/);
  }, 60_000);
});
