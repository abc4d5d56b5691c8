import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, onTestFinished, test } from 'vitest';
import { expectOneLineError, fieldsOf, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  const svc = (argv: string[], baseUrl = emu.url) => runSvc([...argv, '--base-url', baseUrl], { cwd });
  return { emu, cwd, svc };
}

describe('svc tenants', () => {
  test('create prints the new keys once (and --json); list shows every tenant, no key; the keys work', async () => {
    const { emu, svc } = await setup();
    const created = await svc(['tenants', 'create', 'acme']);
    expect(created.code, created.stderr).toBe(0);
    const fields = fieldsOf(created.stdout);
    expect(fields).toMatchObject({ name: 'acme', 'management key': expect.stringMatching(/^key_/) });
    expect(created.stderr).toContain('shown once');

    const json = await svc(['tenants', 'create', 'globex', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const globex = json.json();
    expect(globex).toMatchObject({
      name: 'globex',
      management_key: expect.any(String),
      private_key: expect.any(String),
    });

    const listed = await svc(['tenants', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json()).toEqual([
      { id: emu.tenantId, name: expect.any(String), created_at: expect.any(String), bootstrap: true },
      { id: fields.id, name: 'acme', created_at: expect.any(String), bootstrap: false },
      { id: globex.id, name: 'globex', created_at: expect.any(String), bootstrap: false },
    ]);
    expect(listed.stdout).not.toContain('key_');
    const table = await svc(['tenants', 'list']);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+CREATED\s+SERVE$/m);
    expect(table.stdout).toContain('globex');

    const apps = await runSvc(
      ['applications', 'list', '--json', '--base-url', emu.url, '--management-key', globex.management_key],
      {
        cwd: await tempDir(),
      },
    );
    expect(apps.code, apps.stderr).toBe(0);
    expect(apps.json().pagination.total_items).toBe(2);
  });

  test('--save-profile saves the URL and keys as a new profile, and never replaces one', async () => {
    const { emu, cwd } = await setup();
    const created = await runSvc(['tenants', 'create', 'acme', '--save-profile', 'acme', '--base-url', emu.url], {
      cwd,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('--profile acme');
    const apps = await runSvc(['applications', 'list', '--json', '--profile', 'acme'], { cwd });
    expect(apps.code, apps.stderr).toBe(0);
    expect(
      apps
        .json()
        .data.map((app: { name: string }) => app.name)
        .sort(),
    ).toEqual(['svc management', 'svc private']);
    const again = await runSvc(['tenants', 'create', 'other', '--save-profile', 'acme', '--base-url', emu.url], {
      cwd,
    });
    expectOneLineError(again, 1, /^Error: A profile named "acme" exists already/);
    const listed = await runSvc(['tenants', 'list', '--json', '--base-url', emu.url], { cwd });
    expect(listed.json().map((tenant: { name: string }) => tenant.name)).not.toContain('other');
  });

  test('a remote target, or a loopback server without the route, is one line and exit 1', async () => {
    const { svc } = await setup();
    expectOneLineError(
      await svc(['tenants', 'list'], 'https://api.example.com'),
      1,
      /^Error: svc tenants works against the emulator on this machine only .* the target is https:\/\/api\.example\.com\./,
    );
    const server = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/problem+json' });
      response.end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expectOneLineError(await svc(['tenants', 'create', 'x'], url), 1, /has no tenants admin route \(404\)/);
    expectOneLineError(await svc(['tenants', 'list'], url), 1, /has no tenants admin route \(404\)/);
  });
});
