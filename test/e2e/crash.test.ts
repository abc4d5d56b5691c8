import { readFileSync, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { http, type HttpResult } from '../helpers/emulator.js';
import { spawnSvc, type SvcProcess } from '../helpers/process.js';
import { tempDir } from '../helpers/temp.js';

const MANAGEMENT_KEY = 'crash-management-key-01';
const PRIVATE_KEY = 'crash-private-key-0001';
const TOKENS_PER_REQUEST = 40;

const jsonLine = (event: string) => (line: string) => line.startsWith('{') && JSON.parse(line).event === event;

interface Running {
  proc: SvcProcess;
  url: string;
  call(
    method: string,
    route: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<HttpResult>;
}

/** `svc serve` as a real process over the data in `dir`, ready to answer. */
async function serve(dir: string): Promise<Running> {
  const proc = spawnSvc(['serve', '--port', '0', '--data', path.join(dir, 'data.json'), '--log-format', 'json'], {
    cwd: dir,
    env: { SVC_MANAGEMENT_KEY: MANAGEMENT_KEY, SVC_PRIVATE_KEY: PRIVATE_KEY },
  });
  await proc.waitForLine(jsonLine('ready'), 15_000);
  const { url } = JSON.parse(await proc.waitForLine(jsonLine('listening'))) as { url: string };
  return {
    proc,
    url,
    call: (method, route, options = {}) => http(url + route, method, { key: PRIVATE_KEY, ...options }),
  };
}

async function kill(running: Running): Promise<void> {
  running.proc.child.kill('SIGKILL');
  const { signal } = await running.proc.exited;
  expect(signal).toBe('SIGKILL');
}

/** Every token id the emulator lists, page by page. */
async function listedIds(running: Running): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const listed = await running.call('GET', `/tokens?size=100&page=${page}`);
    expect(listed.status, listed.text).toBe(200);
    const data = listed.body.data as { id: string }[];
    ids.push(...data.map((token) => token.id));
    if (data.length < 100) return ids;
  }
}

/** Every JSON file of the store parses; no temp file outlives the open that follows a crash. */
async function expectStoreFilesParse(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  for (const file of files.filter((name) => name.endsWith('.json'))) {
    expect(() => JSON.parse(readFileSync(file, 'utf8')), file).not.toThrow();
  }
  expect(files.filter((name) => name.endsWith('.tmp'))).toEqual([]);
}

interface Sent {
  prefix: string;
  acknowledged: boolean;
  status?: number;
}

describe('crash safety of a real svc serve', () => {
  it('keeps every tokenize request whole over SIGKILL rounds: acknowledged ones all there, the others all or nothing', async () => {
    const dir = await tempDir();
    const sent: Sent[] = [];
    const check = async (running: Running) => {
      const byRequest = new Map<string, number>();
      for (const id of await listedIds(running)) {
        const prefix = id.slice(0, id.lastIndexOf('-'));
        byRequest.set(prefix, (byRequest.get(prefix) ?? 0) + 1);
      }
      const known = new Set(sent.map(({ prefix }) => prefix));
      expect([...byRequest.keys()].filter((prefix) => !known.has(prefix))).toEqual([]);
      const lost = sent.filter(
        ({ prefix, acknowledged }) => acknowledged && byRequest.get(prefix) !== TOKENS_PER_REQUEST,
      );
      const partial = sent.filter(({ prefix }) => ![undefined, TOKENS_PER_REQUEST].includes(byRequest.get(prefix)));
      expect(lost.map(({ prefix }) => prefix)).toEqual([]);
      expect(partial.map(({ prefix }) => `${prefix}: ${byRequest.get(prefix)}`)).toEqual([]);
    };

    // Each round kills the server after another number of acknowledged requests, with four
    // clients sending: the other requests are in flight, at any step of their write.
    for (const [round, killAfter] of [3, 9, 20].entries()) {
      const running = await serve(dir);
      if (round > 0) {
        await expectStoreFilesParse(dir);
        await check(running);
      }
      let acknowledged = 0;
      let killed = false;
      const client = async (c: number) => {
        for (let n = 0; !killed; n++) {
          const entry: Sent = { prefix: `r${round}c${c}n${n}`, acknowledged: false };
          sent.push(entry);
          const body = Array.from({ length: TOKENS_PER_REQUEST }, (_, i) => ({
            type: 'token',
            id: `${entry.prefix}-${i}`,
            data: `${entry.prefix}/${i}`,
          }));
          try {
            const answer = await running.call('POST', '/tokenize', { body });
            entry.status = answer.status;
            if (answer.status !== 201) return;
            entry.acknowledged = true;
          } catch {
            return; // the connection died with the server
          }
          if (++acknowledged >= killAfter && !killed) {
            killed = true;
            await kill(running);
          }
        }
      };
      await Promise.all([0, 1, 2, 3].map(client));
      expect(sent.filter(({ status }) => status !== undefined && status !== 201)).toEqual([]);
    }
    const last = await serve(dir);
    await expectStoreFilesParse(dir);
    await check(last);
    expect(sent.filter(({ acknowledged }) => acknowledged).length).toBeGreaterThanOrEqual(3 + 9 + 20);
    expect(sent.filter(({ acknowledged }) => !acknowledged).length).toBeGreaterThan(0);
  }, 60_000);

  it('commits a 3,000-token transaction all or nothing when killed during the commit', async () => {
    const dir = await tempDir();
    const running = await serve(dir);
    const begun = await running.call('POST', '/transactions');
    expect(begun.status, begun.text).toBe(201);
    const tx = begun.body.id as string;
    const inTx = { 'svc-transaction-id': tx };
    for (let chunk = 0; chunk < 6; chunk++) {
      const body = Array.from({ length: 500 }, (_, i) => ({
        type: 'token',
        id: `c${chunk}-${i}`,
        data: `v${chunk}-${i}`,
      }));
      const staged = await running.call('POST', '/tokenize', { body, headers: inTx });
      expect(staged.status, staged.text).toBe(201);
    }

    // Killed once the commit's journal entry is on disk, while its 3,000 tokens go to their files.
    const journal = path.join(dir, 'data', 'journal');
    let answered = false;
    const commit = running.call('POST', `/transactions/${tx}/commit`).then(
      () => (answered = true),
      () => {},
    );
    let journalSeen = false;
    while (!answered && !journalSeen) {
      journalSeen = readdirSync(journal).some((name) => /^\d+\.json$/.test(name));
      if (!journalSeen) await new Promise((resolve) => setImmediate(resolve));
    }
    await kill(running);
    await commit;

    const restarted = await serve(dir);
    await expectStoreFilesParse(dir);
    const status = (await restarted.call('GET', `/transactions/${tx}`)).body.status as string;
    const total = (await restarted.call('GET', '/tokens?size=1')).body.pagination.total_items as number;
    expect({ status, total }).toEqual(
      journalSeen || answered ? { status: 'committed', total: 3000 } : { status: 'open', total: 0 },
    );
    const sample = await restarted.call('POST', '/detokenize', { body: { a: '{{ c0-0 }}', b: '{{ c5-499 }}' } });
    expect(sample.body).toEqual({ a: 'v0-0', b: 'v5-499' });
    expect(await readdir(journal)).toEqual([]);
  }, 60_000);

  it('refuses a second server on the same store, and takes the lock over after a SIGKILL', async () => {
    const dir = await tempDir();
    const first = await serve(dir);
    const tx = (await first.call('POST', '/transactions')).body.id as string;
    const body = Array.from({ length: 300 }, (_, i) => ({ type: 'token', id: `s-${i}`, data: `v${i}` }));
    expect((await first.call('POST', '/tokenize', { body, headers: { 'svc-transaction-id': tx } })).status).toBe(201);

    const second = spawnSvc(['serve', '--port', '0', '--data', path.join(dir, 'data.json')], {
      cwd: dir,
      env: { SVC_MANAGEMENT_KEY: MANAGEMENT_KEY },
    });
    expect((await second.exited).code).toBe(1);
    expect(second.stderr()).toContain(`is in use by another svc serve (pid ${first.proc.child.pid})`);
    expect(second.stderr()).not.toContain('bug');

    await kill(first);
    const restarted = await serve(dir);
    // Staged writes stay staged through the kill, and a rollback keeps none of them.
    expect((await restarted.call('GET', `/transactions/${tx}`)).body.status).toBe('open');
    expect((await restarted.call('GET', '/tokens?size=1')).body.pagination.total_items).toBe(0);
    expect((await restarted.call('POST', `/transactions/${tx}/rollback`)).status).toBe(200);
    expect((await restarted.call('GET', '/tokens?size=1')).body.pagination.total_items).toBe(0);
  }, 30_000);
});
