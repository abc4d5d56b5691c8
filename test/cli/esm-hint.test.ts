import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';

describe('ES module syntax in a reactor (issue 31)', () => {
  test.each([
    ['export default', 'export default async function (req) {\n  return { raw: {} };\n}\n'],
    ['import', "import crypto from 'node:crypto';\nmodule.exports = async () => ({ raw: {} });\n"],
  ])('%s: the load error says reactors are CommonJS and shows the form to use', async (_, code) => {
    const emu = await startEmulator();
    await writeFile(path.join(emu.dir, 'esm.js'), code);
    const result = await runSvc('reactors create --name esm --code esm.js', { cwd: emu.dir });
    expectOneLineError(
      result,
      1,
      /^Error: .*esm\.js:1:1.*SyntaxError: .*reactors and transforms are CommonJS: `module\.exports = async function \(req\) \{ \.\.\. \}`/,
    );
    expect((await emu.call('GET', '/reactors')).body.data).toEqual([]);
  });

  test('another syntax error gets no such hint', async () => {
    const emu = await startEmulator();
    await writeFile(path.join(emu.dir, 'bad.js'), 'module.exports = async () => {\n');
    const result = await runSvc('reactors create --name bad --code bad.js', { cwd: emu.dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/SyntaxError/);
    expect(result.stderr).not.toContain('CommonJS');
  });
});
