// Hot reload as a user gets it: a real `svc serve --config svc.yaml` process, a small reactor whose
// file is saved again and again while clients hammer it. Per save: the time from the save to the
// first response of the new code; over all saves: refused connections (and other failed calls),
// and responses of an older code to calls sent after the new code first answered.
//   node bench/reload.js [saves]      prints the figures as one JSON line
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { MANAGEMENT_KEY, PRIVATE_KEY, serveArgs } from './serve-args.js';

const CLIENTS = 4;

const version = (i) => `module.exports = async () => ({ raw: { version: ${i} } });\n`;
const SVC_YAML = `applications:
  caller:
    type: private
    permissions: [token:use]
reactors:
  bench:
    code: reactors/bench.js
    application: caller
`;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function call(url, method, pathname, key, body) {
  const response = await request(url + pathname, {
    method,
    headers: { 'svc-api-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: text ? JSON.parse(text) : undefined };
}

/** Starts serve in `dir` and resolves once it listens (its first JSON line). */
async function startServe(dir) {
  const child = spawn(process.execPath, serveArgs(['--in-memory']), {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: os.tmpdir() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  for (;;) {
    const first = output.split('\n')[0];
    if (output.includes('\n') && first) return { child, url: JSON.parse(first).url, output: () => output };
    if (child.exitCode !== null) throw new Error(`svc serve exited: ${output}`);
    await sleep(5);
  }
}

export async function measureReload({ saves = 20, scratch = os.tmpdir() } = {}) {
  const dir = await mkdtemp(path.join(scratch, 'reload-'));
  await mkdir(path.join(dir, 'reactors'));
  const file = path.join(dir, 'reactors', 'bench.js');
  await writeFile(file, version(0));
  await writeFile(path.join(dir, 'svc.yaml'), SVC_YAML);
  const { child, url, output } = await startServe(dir);
  let id;
  while (id === undefined) {
    const list = await call(url, 'GET', '/reactors', MANAGEMENT_KEY);
    id = list.body?.data?.find((reactor) => reactor.name === 'bench')?.id;
    if (id === undefined) await sleep(10);
  }

  // The hammer: every answer with the time its call was sent and the version it came from.
  let current = 0;
  let firstNewAt = 0;
  const firstNew = new Map();
  let refused = 0;
  let failed = 0;
  let stale = 0;
  let calls = 0;
  let running = true;
  const client = async () => {
    while (running) {
      const sent = performance.now();
      try {
        const { status, body } = await call(url, 'POST', `/reactors/${id}/react`, PRIVATE_KEY, { args: {} });
        calls++;
        if (status !== 200) failed++;
        const served = body?.raw?.version;
        if (served === current && !firstNew.has(served)) firstNew.set(served, performance.now());
        if (served === current && firstNewAt === 0) firstNewAt = performance.now();
        // Older code answering a call sent after the new code first answered.
        if (typeof served === 'number' && served < current && firstNewAt !== 0 && sent > firstNewAt) stale++;
      } catch (error) {
        if (error.code === 'ECONNREFUSED') refused++;
        else failed++;
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  const samples = [];
  for (let i = 1; i <= saves; i++) {
    await sleep(i === 1 ? 2000 : 300); // a developer's pause between saves (the first: the watch starts)
    firstNewAt = 0;
    const saved = performance.now();
    current = i;
    await writeFile(file, version(i)); // an editor's save, in place
    while (!firstNew.has(i)) {
      if (performance.now() - saved > 10_000)
        throw new Error(`version ${i} was not served 10 s after the save: ${output()}`);
      await sleep(1);
    }
    samples.push(firstNew.get(i) - saved);
  }
  running = false;
  await Promise.all(clients);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  await rm(dir, { recursive: true, force: true });
  return { saves, medianMs: median(samples), maxMs: Math.max(...samples), refused, failed, stale, calls };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const saves = Number(process.argv[2] ?? 20);
  const result = await measureReload({ saves });
  process.stdout.write(
    `${JSON.stringify({ ...result, medianMs: Math.round(result.medianMs * 10) / 10, maxMs: Math.round(result.maxMs * 10) / 10 })}\n`,
  );
}
