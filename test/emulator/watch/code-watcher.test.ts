import { rename, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { EmulatorEventInit } from '../../../src/emulator/events.js';
import { CodeWatcher, type WatchedFile } from '../../../src/emulator/watch/code-watcher.js';
import { startEmulator } from '../../helpers/emulator.js';
import { tempDir } from '../../helpers/temp.js';

type ReloadEvent = Extract<EmulatorEventInit, { type: 'reload' }>;

/** A watcher over one file whose reloads are recorded; `reload` may be replaced per test. */
async function watchOne(options: { initial?: string; reload?: (code: string) => Promise<void>; debounceMs?: number } = {}) {
  const dir = await tempDir();
  const file = path.join(dir, 'reactor.js');
  await writeFile(file, options.initial ?? 'v0');
  const events: EmulatorEventInit[] = [];
  const loads: string[] = [];
  const spec: WatchedFile = {
    file,
    label: 'reactor bench',
    reload: async (code) => {
      loads.push(code);
      await options.reload?.(code);
    },
  };
  const watcher = new CodeWatcher([spec], { emit: (event) => events.push(event), ...(options.debounceMs !== undefined && { debounceMs: options.debounceMs }) });
  onTestFinished(() => watcher.close());
  await watcher.whenReady();
  const reloads = () => events.filter((event): event is ReloadEvent => event.type === 'reload');
  return { dir, file, events, loads, watcher, reloads };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Long enough for a missed event to have arrived (chokidar, the debounce and the read). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('CodeWatcher', () => {
  it('reloads a file saved in place with its new contents, and reports it', async () => {
    const { file, loads, reloads } = await watchOne();
    await writeFile(file, 'v1');
    await until(() => reloads().length === 1, 'a reload');
    expect(loads).toEqual(['v1']);
    expect(reloads()[0]).toMatchObject({ type: 'reload', target: 'reactor bench', file, ok: true });
    expect(reloads()[0]!.ms).toBeGreaterThanOrEqual(0);
  });

  it('reloads a file saved by rename, as editors do', async () => {
    const { dir, file, loads, reloads } = await watchOne();
    const temp = path.join(dir, '.reactor.js.swp');
    await writeFile(temp, 'renamed in');
    await rename(temp, file);
    await until(() => reloads().length >= 1, 'a reload');
    await settle();
    expect(loads).toEqual(['renamed in']);
  });

  it('loses no save made right after the one before (chokidar drops a change within 50 ms of the last)', async () => {
    const { file, loads, reloads } = await watchOne();
    for (let i = 1; i <= 5; i++) {
      await writeFile(file, `v${i}`);
      await until(() => reloads().some((event) => loads.at(-1) === `v${i}` && event.ok), `v${i} to load`);
    }
    expect(loads).toEqual(['v1', 'v2', 'v3', 'v4', 'v5']);
  });

  it('makes one reload of a burst of writes, with the last contents', async () => {
    const { file, loads, reloads } = await watchOne({ debounceMs: 100 });
    for (const version of ['', 'half', 'whole']) await writeFile(file, version);
    await until(() => reloads().length === 1, 'a reload');
    await settle();
    expect(loads).toEqual(['whole']);
  });

  it('reports code that does not load, and reloads again on the next save', async () => {
    const { file, loads, reloads } = await watchOne({
      reload: async (code) => {
        if (code.includes('syntax error')) throw new Error('Code does not load: Unexpected identifier');
      },
    });
    await writeFile(file, 'syntax error here');
    await until(() => reloads().length === 1, 'the failed reload');
    expect(reloads()[0]).toMatchObject({ ok: false, error: 'Code does not load: Unexpected identifier' });
    await settle();
    await writeFile(file, 'fixed');
    await until(() => reloads().some((event) => event.ok), 'the second reload');
    expect(reloads()).toHaveLength(2);
    expect(loads).toEqual(['syntax error here', 'fixed']);
  });

  it('tries failing code again when it is saved again (touched), not when one save is reported twice', async () => {
    const { file, loads, reloads } = await watchOne({
      reload: async () => {
        throw new Error('the emulator is down');
      },
    });
    await writeFile(file, 'broken');
    await until(() => reloads().length === 1, 'the failed reload');
    await settle();
    expect(loads).toEqual(['broken']);
    await utimes(file, new Date(), new Date(Date.now() + 60_000));
    await until(() => reloads().length === 2, 'the retry');
    expect(loads).toEqual(['broken', 'broken']);
  });

  it('does not reload contents that are already serving', async () => {
    const { file, loads, reloads } = await watchOne({ initial: 'same' });
    await writeFile(file, 'next');
    await until(() => reloads().length === 1, 'a reload');
    await writeFile(file, 'next');
    await settle();
    expect(loads).toEqual(['next']);
  });

  it('runs one reload at a time per file; saves during a reload make one more, with the latest contents', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { file, loads, reloads } = await watchOne({ reload: (code) => (code === 'slow' ? gate : Promise.resolve()) });
    await writeFile(file, 'slow');
    await until(() => loads.length === 1, 'the slow reload to start');
    await writeFile(file, 'second');
    await settle();
    await writeFile(file, 'third');
    await settle();
    expect(loads).toEqual(['slow']);
    release();
    await until(() => reloads().length === 2, 'the follow-up reload');
    await settle();
    expect(loads).toEqual(['slow', 'third']);
  });

  it('warns when the file is deleted and keeps watching for it to come back', async () => {
    const { file, events, loads, reloads } = await watchOne();
    await unlink(file);
    await until(() => events.some((event) => event.type === 'warning'), 'a warning');
    expect(events.find((event) => event.type === 'warning')).toMatchObject({ message: expect.stringContaining('keeps its last loaded code') });
    await writeFile(file, 'back');
    await until(() => reloads().length === 1, 'a reload');
    expect(loads).toEqual(['back']);
  });

  it('sees a file deleted and made again in either of two folders', async () => {
    const [one, two] = [await tempDir(), await tempDir()];
    const files = [path.join(one, 'a.js'), path.join(two, 'b.js')];
    for (const file of files) await writeFile(file, 'v0');
    const loads: string[] = [];
    const watcher = new CodeWatcher(
      files.map((file) => ({ file, label: path.basename(file), reload: async (code: string) => void loads.push(`${path.basename(file)}:${code}`) })),
      { emit: () => {} },
    );
    onTestFinished(() => watcher.close());
    await watcher.whenReady();
    await unlink(files[1]!);
    await settle();
    await writeFile(files[1]!, 'back');
    await until(() => loads.includes('b.js:back'), 'b.js to reload');
    await writeFile(files[1]!, 'again');
    await until(() => loads.includes('b.js:again'), 'the next save of b.js');
    await writeFile(files[0]!, 'a saved');
    await until(() => loads.includes('a.js:a saved'), 'a.js to reload');
  });

  it('is ready at once with no files, and a throwing log does not end the process', async () => {
    const empty = new CodeWatcher([], { emit: () => {} });
    await empty.whenReady();
    await empty.close();
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    onTestFinished(() => void process.off('unhandledRejection', onRejection));
    const { file, loads } = await watchOne();
    const dir = path.dirname(file);
    const throwing = new CodeWatcher([{ file, label: 'x', reload: async (code) => void loads.push(code) }], {
      emit: () => {
        throw new Error('the log is gone');
      },
    });
    onTestFinished(() => throwing.close());
    await throwing.whenReady();
    await writeFile(path.join(dir, 'reactor.js'), 'v1');
    await until(() => loads.filter((code) => code === 'v1').length === 2, 'both watchers to reload');
    await settle();
    expect(rejections).toEqual([]);
  });

  it('reloads nothing once closed', async () => {
    const { file, loads, watcher } = await watchOne();
    await watcher.close();
    await writeFile(file, 'after close');
    await settle();
    expect(loads).toEqual([]);
  });
});

describe('hot reload of a reactor through the emulator', () => {
  it('serves the saved code; code that does not load leaves the previous version serving', async () => {
    const emulator = await startEmulator({ inMemory: true });
    const code = (answer: string) => `module.exports = async () => ({ raw: { answer: ${JSON.stringify(answer)} } });\n`;
    const created = await emulator.call('POST', '/reactors', { body: { name: 'hot', code: code('first'), configuration: {} } });
    expect(created.status).toBe(201);
    const dir = await tempDir();
    const file = path.join(dir, 'hot.js');
    await writeFile(file, code('first'));
    const events: EmulatorEventInit[] = [];
    const watcher = new CodeWatcher(
      [
        {
          file,
          label: 'reactor hot',
          loaded: code('first'),
          reload: async (text) => {
            const patched = await emulator.call('PATCH', `/reactors/${created.body.id}`, { body: { code: text }, contentType: 'application/merge-patch+json' });
            if (patched.status !== 204) throw new Error(patched.body.detail);
          },
        },
      ],
      { emit: (event) => events.push(event) },
    );
    onTestFinished(() => watcher.close());
    await watcher.whenReady();
    const answer = async () => (await emulator.call('POST', `/reactors/${created.body.id}/react`, { key: emulator.privateKey, body: { args: {} } })).body.raw?.answer;
    expect(await answer()).toBe('first');

    await writeFile(file, code('second'));
    await until(() => events.some((event) => event.type === 'reload' && event.ok), 'the reload');
    expect(await answer()).toBe('second');

    await writeFile(file, 'module.exports = async () => {');
    await until(() => events.some((event) => event.type === 'reload' && !event.ok), `the refused reload (${JSON.stringify(events)})`);
    expect(events.find((event) => event.type === 'reload' && !event.ok)).toMatchObject({ error: expect.stringMatching(/Unexpected end of input|SyntaxError/) });
    expect(await answer()).toBe('second');
  });
});
