import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { http } from '../helpers/emulator.js';
import { execSvc, spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

const jsonLine = (event: string) => (line: string) => line.startsWith('{') && JSON.parse(line).event === event;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('svc serve as a real process', () => {
  it('prints JSON lines (listening first) when stdout is not a terminal, serves the CLI, and stops cleanly on SIGTERM', async () => {
    const cwd = await tempDir();
    const serve = spawnSvc(['serve', '--port', '0'], { cwd });
    const listening = JSON.parse(await serve.waitForLine(() => true));
    expect(listening).toEqual({
      time: expect.stringMatching(ISO),
      event: 'listening',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    const ready = JSON.parse(await serve.waitForLine(jsonLine('ready')));
    expect(ready).toMatchObject({
      event: 'ready',
      created: true,
      tier: 'enterprise',
      data: path.join('.svc', 'data.json'),
      generated_keys: ['management', 'private'],
    });
    // The keys are in the credentials file, never in a log line.
    const { management_key: managementKey } = JSON.parse(
      await readFile(path.join(cwd, '.svc', 'credentials.json'), 'utf8'),
    );
    expect(managementKey).toMatch(/^key_local_mgt_/);

    expect((await http(`${listening.url}/health`, 'GET')).status).toBe(200);

    // the CLI, another process in the same folder, finds the emulator and its keys by itself
    const listed = await execSvc(
      ['applications', 'create', '--name', 'from-cli', '--type', 'private', '--permission', 'token:use', '--json'],
      { cwd },
    );
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ name: 'from-cli', type: 'private' });

    const request = JSON.parse(
      await serve.waitForLine((line) => line.includes('"event":"request"') && line.includes('POST')),
    );
    expect(request).toEqual({
      time: expect.stringMatching(ISO),
      event: 'request',
      method: 'POST',
      path: '/applications',
      status: 201,
      ms: expect.any(Number),
      trace_id: expect.any(String),
      tenant_id: ready.tenant_id,
    });
    expect(serve.lines.join('\n')).not.toContain(managementKey);

    serve.child.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);
    expect(JSON.parse(serve.lines.at(-1)!)).toEqual({ time: expect.stringMatching(ISO), event: 'stopped' });
    const stored = await readFile(path.join(cwd, '.svc', 'data', 'applications.json'), 'utf8');
    expect(stored).toContain('from-cli');

    // a second start on the same data keeps it, creates nothing and shows no key
    const again = spawnSvc(['serve', '--port', '0', '--log-format', 'json'], { cwd });
    const readyAgain = JSON.parse(await again.waitForLine(jsonLine('ready')));
    expect(readyAgain.created).toBe(false);
    expect(readyAgain.generated_keys).toEqual([]);
    const after = await execSvc(['applications', 'list', '--json'], { cwd });
    expect(JSON.parse(after.stdout).data.map((app: { name: string }) => app.name)).toContain('from-cli');
    again.child.kill('SIGINT');
    expect((await again.exited).code).toBe(0);
  });

  it('uses the keys given by env, in memory', async () => {
    const cwd = await tempDir();
    const serve = spawnSvc(['serve', '--port', '0', '--in-memory'], {
      cwd,
      env: { SVC_MANAGEMENT_KEY: 'e2e-management-key-123', SVC_PRIVATE_KEY: 'e2e-private-key-123456' },
    });
    const { url } = JSON.parse(await serve.waitForLine(jsonLine('listening')));
    const ready = JSON.parse(await serve.waitForLine(jsonLine('ready')));
    expect(ready.generated_keys).toEqual([]);
    expect(serve.lines.join('\n')).not.toContain('e2e-management-key-123');
    expect((await http(`${url}/applications`, 'GET', { key: 'e2e-management-key-123' })).status).toBe(200);
    const cli = await execSvc(['applications', 'whoami', '--json', '--base-url', url], {
      cwd,
      env: { SVC_MANAGEMENT_KEY: 'e2e-management-key-123' },
    });
    expect(JSON.parse(cli.stdout).type).toBe('management');
  });

  it('exits 1 with one line when the port is taken', async () => {
    const cwd = await tempDir();
    const first = spawnSvc(['serve', '--port', '0', '--in-memory'], { cwd });
    const { url } = JSON.parse(await first.waitForLine(jsonLine('listening')));
    const second = await execSvc(['serve', '--port', new URL(url).port, '--in-memory'], { cwd });
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^Error: Port \d+ on 127\.0\.0\.1 is already in use/),
    ]);
  });

  it('exits 2 on a usage error', async () => {
    const cwd = await tempDir();
    const result = await execSvc(['serve', '--data', 'x.json', '--in-memory'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--data and --in-memory cannot be used together');
  });
});
