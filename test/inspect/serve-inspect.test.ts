import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { http } from '../helpers/emulator.js';
import { execSvc, spawnSvc } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';
import { eventually } from '../helpers/wait.js';
import { connectInspector, inspectorTargets } from './cdp.js';

const SVC_YAML = `reactors:
  double:
    code: reactors/double.js
`;
const code = (factor: number, comments = 0) =>
  `${'// edited\n'.repeat(comments)}module.exports = async function (req) {\n  const result = req.args.n * ${factor};\n  return { raw: { result } };\n};\n`;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('svc serve --inspect', () => {
  it('binds breakpoints in the file svc.yaml names, before and after a save reloads it', async () => {
    const cwd = await tempDir();
    const file = path.join(cwd, 'reactors', 'double.js');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, code(2));
    await writeFile(path.join(cwd, 'svc.yaml'), SVC_YAML);
    const port = await freePort();
    const svc = spawnSvc(
      ['serve', '--port', '0', `--inspect=${port}`, '--config', 'svc.yaml', '--log-format', 'json'],
      {
        cwd,
      },
    );
    const notice = await svc.waitForLine((line) => line.includes('"warning"') && line.includes('Inspect mode'), 20_000);
    expect(notice).toContain('permission model');
    expect(notice).toContain(`127.0.0.1:${port}`);

    const credentials = await eventually(async () => {
      const saved = JSON.parse(await readFile(path.join(cwd, '.svc', 'credentials.json'), 'utf8'));
      expect(saved.private_key).toBeDefined();
      return saved as { url: string; management_key: string; private_key: string };
    }, 15_000);
    const reactor = await eventually(async () => {
      const list = await http(`${credentials.url}/reactors`, 'GET', { key: credentials.management_key });
      const found = (list.body.data as { id: string; name: string }[]).find((each) => each.name === 'double');
      expect(found).toBeDefined();
      return found!;
    }, 15_000);
    const invoke = (n: number) =>
      http(`${credentials.url}/reactors/${reactor.id}/react`, 'POST', {
        key: credentials.private_key,
        body: { args: { n } },
      });
    expect((await invoke(1)).body.raw).toEqual({ result: 2 });

    const [target] = await eventually(async () => {
      const listed = await inspectorTargets(port);
      expect(listed).toHaveLength(1);
      return listed;
    }, 15_000);
    const session = await connectInspector(target!.webSocketDebuggerUrl);
    const url = pathToFileURL(file).href;
    try {
      await session.send('Debugger.enable');
      /** Sets a breakpoint at `line` (0-based) of the user's file, invokes, and checks where it paused. */
      const pauseAt = async (line: number, n: number) => {
        const breakpoint = await session.send('Debugger.setBreakpointByUrl', { url, lineNumber: line });
        const paused = session.next('Debugger.paused');
        const call = invoke(n);
        const stop = await paused;
        expect(session.scriptUrl(stop.callFrames[0].location.scriptId)).toBe(url);
        expect(stop.callFrames[0].location.lineNumber).toBe(line);
        await session.send('Debugger.removeBreakpoint', { breakpointId: breakpoint.breakpointId });
        await session.send('Debugger.resume');
        const answered = await call;
        expect(answered.status, answered.text).toBe(200);
        return answered.body.raw;
      };
      expect(await pauseAt(1, 5)).toEqual({ result: 10 });

      // A save reloads the code (hot reload), still under the file's URL: its lines as they now are.
      await writeFile(file, code(3, 2));
      await eventually(async () => expect((await invoke(1)).body.raw).toEqual({ result: 3 }), 15_000);
      expect(await pauseAt(3, 5)).toEqual({ result: 15 });
    } finally {
      session.close();
    }
    svc.child.kill('SIGINT');
    expect((await svc.exited).code).toBe(0);
  });

  it('refuses a port that is not one, in one line', async () => {
    const cwd = await tempDir();
    const run = await execSvc(['serve', '--port', '0', '--in-memory', '--inspect=nine'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('--inspect takes a port from 0 to 65535');
  });

  it('refuses --inspect with a --host other machines reach, in one line: their API calls would run code without the permission model', async () => {
    const cwd = await tempDir();
    for (const host of ['0.0.0.0', '::']) {
      const run = await execSvc(['serve', '--port', '0', '--in-memory', '--host', host, '--inspect=0'], { cwd });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/--inspect .*--host 127\.0\.0\.1/);
    }
  });
});
