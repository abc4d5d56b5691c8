import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';
import { eventually, sleep } from '../helpers/wait.js';
import { connectInspector, inspectorTargets } from './cdp.js';

const CODE = [
  'module.exports = async function (req) {',
  '  const doubled = req.args.n * 2;',
  '  if (req.args.fail) throw new Error("asked to fail");',
  '  return { raw: { doubled } };',
  '};',
  '',
].join('\n');

describe('the sandbox under a debugger (inspect)', () => {
  it('pauses at a breakpoint set in the user file, past the call timeout, and the call still answers', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'reactors', 'double.js');
    await writeFile(path.join(dir, 'placeholder'), '');
    const asked: unknown[][] = [];
    const emu = await startEmulator({
      inMemory: true,
      syncTimeoutMs: 1000,
      inspect: {
        port: 0,
        sourcePath: (kind, name, which) => {
          asked.push([kind, name, which]);
          return kind === 'reactor' && name === 'double' ? file : undefined;
        },
      },
    });
    const port = emu.started.inspectPort!;
    expect(port).toBeGreaterThan(0);
    const created = await emu.call('POST', '/reactors', { body: { name: 'double', code: CODE, configuration: {} } });
    expect(created.status, created.text).toBe(201);
    const invoke = (args: unknown) =>
      emu.call('POST', `/reactors/${created.body.id}/react`, { key: emu.privateKey, body: { args } });
    const first = await invoke({ n: 2 });
    expect(first.status, first.text).toBe(200);
    expect(first.body.raw).toEqual({ doubled: 4 });
    expect(asked).toContainEqual(['reactor', 'double', undefined]);

    const targets = await eventually(async () => {
      const listed = await inspectorTargets(port);
      expect(listed).toHaveLength(1);
      return listed;
    }, 15_000);
    const session = await connectInspector(targets[0]!.webSocketDebuggerUrl);
    try {
      await session.send('Debugger.enable');
      const url = pathToFileURL(file).href;
      // Line 2 of the file (0-based 1): `const doubled = ...`.
      const breakpoint = await session.send('Debugger.setBreakpointByUrl', { url, lineNumber: 1 });
      expect(breakpoint.locations.length).toBeGreaterThan(0);
      const paused = session.next('Debugger.paused');
      const call = invoke({ n: 21 });
      const stop = await paused;
      expect(session.scriptUrl(stop.callFrames[0].location.scriptId)).toBe(url);
      expect(stop.callFrames[0].location.lineNumber).toBe(1);
      // Held at the breakpoint for longer than the call's timeout (1 s): timeouts are off while inspecting.
      await sleep(2500);
      await session.send('Debugger.removeBreakpoint', { breakpointId: breakpoint.breakpointId });
      await session.send('Debugger.resume');
      const answered = await call;
      expect(answered.status, answered.text).toBe(200);
      expect(answered.body.raw).toEqual({ doubled: 42 });
    } finally {
      session.close();
    }

    // Stacks and problems still name the code as without a debugger (the user's name for it).
    const failed = await invoke({ n: 1, fail: true });
    expect(failed.status, failed.text).toBe(500);
    expect(failed.text).toContain('double.js:3');
    expect(failed.text).not.toContain('file://');
  });
});
