import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc, splitArgs } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

async function setup() {
  const emu = await startEmulator({ inMemory: true });
  const cwd = await tempDir();
  await writeFile(path.join(cwd, 'echo.js'), 'module.exports = async (req) => ({ raw: req.args });\n');
  const svc = (line: string) =>
    runSvc([...splitArgs(line), '--base-url', emu.url, '--management-key', emu.managementKey], { cwd });
  return { emu, svc };
}

async function countNamed(emu: TestEmulator, collection: string, name: string): Promise<number> {
  const page = await emu.call('GET', `/${collection}?size=100`);
  return (page.body.data as { name: string }[]).filter((item) => item.name === name).length;
}

describe('a second create with an existing name is refused unless --allow-duplicate (issue 14.5)', () => {
  test.each([
    [
      'applications',
      'applications create --name backend --type private --permission token:read',
      'backend',
      /`svc applications update backend`/,
    ],
    ['reactors', 'reactors create --name charge --code echo.js', 'charge', /`svc reactors update charge`/],
    [
      'proxies',
      'proxies create --name stripe --destination-url http://127.0.0.1:9',
      'stripe',
      /`svc proxies update stripe`/,
    ],
  ])('%s', async (collection, line, name, update) => {
    const { emu, svc } = await setup();
    const first = await svc(line);
    expect(first.code, first.stderr).toBe(0);
    const second = await svc(line);
    expectOneLineError(second, 1, /already exists/);
    expect(second.stderr).toContain(`"${name}"`);
    expect(second.stderr).toMatch(update);
    expect(second.stderr).toContain('svc apply');
    expect(second.stderr).toContain('--allow-duplicate');
    expect(await countNamed(emu, collection, name)).toBe(1);

    const third = await svc(`${line} --allow-duplicate`);
    expect(third.code, third.stderr).toBe(0);
    expect(await countNamed(emu, collection, name)).toBe(2);
  });

  test('a name that only matches as a wildcard, or in another case, is not a duplicate', async () => {
    const { emu, svc } = await setup();
    expect((await svc('reactors create --name charge-eu --code echo.js')).code).toBe(0);
    expect((await svc('reactors create --name Charge --code echo.js')).code).toBe(0);
    const star = await svc('reactors create --name charge* --code echo.js');
    expect(star.code, star.stderr).toBe(0);
    expect(await countNamed(emu, 'reactors', 'charge*')).toBe(1);
  });
});
