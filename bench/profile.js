// Where the time goes: runs one load of `npm run bench` against `svc serve` started under
// `node --cpu-prof`, and prints the profile's self time by module and by function.
//   node bench/profile.js <proxy|proxy-token|get|post|react|react8|bare-forwarder|bare-canned|bare-function[8]> [seconds] [--keep DIR] [--cpu-only]
//   node bench/profile.js <scenario> --instructions [--requests N] [--keep DIR]
// --instructions counts instead the instructions the server runs per request once warm (Valgrind's
// cachegrind, user space only, V8 on one thread): a figure that does not move with the load of a
// shared machine, for comparing two builds where time per request moves by 15% between runs. The server runs twice,
// for 6,000 requests and for 6,000 + N (--requests N, 4,000 by default), and the figure is the
// difference over N: start-up and the JIT's warm-up cancel out; with --keep, the two runs' counts by
// function are kept in DIR for cg_diff. Not for react and react8: a sandbox starting under Valgrind
// outlasts its time limits.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { load } from './load.js';
import { reactorSource } from './reactor.js';
import { MANAGEMENT_KEY, PRIVATE_KEY, serveArgs } from './serve-args.js';
import { summarize } from './profile-summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
/** The value after `--name`, if given. */
const valueOf = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const [scenario = 'proxy', seconds = '5'] = args.filter(
  (arg, i) => !arg.startsWith('--') && !['--keep', '--requests'].includes(args[i - 1]),
);
const counting = args.includes('--instructions');
const keep = valueOf('--keep');
const requests = Number(valueOf('--requests') ?? 4000);
if (counting) {
  if (spawnSync('valgrind', ['--version']).error) {
    process.stderr.write('--instructions counts under Valgrind, which is not installed (apt install valgrind).\n');
    process.exit(2);
  }
  if (scenario.startsWith('react')) {
    process.stderr.write(
      `--instructions does not run ${scenario}: a sandbox starting under Valgrind outlasts its time limits.\n`,
    );
    process.exit(2);
  }
  if (!Number.isInteger(requests) || requests < 100) {
    process.stderr.write('--requests takes a whole number of 100 or more.\n');
    process.exit(2);
  }
}
const dir = keep ?? (await mkdtemp(path.join(os.tmpdir(), 'svc-profile-')));
await mkdir(dir, { recursive: true });

/** A node process of `args`; under cachegrind when `counted` (its log file named by its pid). */
function start(args, counted = false) {
  const [command, argv] = counted
    ? [
        'valgrind',
        [
          '--tool=cachegrind',
          '--cache-sim=no',
          // Kept with --keep, for cg_diff and cg_annotate: instructions by function (V8's compiled code is one "???").
          `--cachegrind-out-file=${keep ? `${dir}/cachegrind.out.%p` : '/dev/null'}`,
          `--log-file=${dir}/valgrind-%p.log`,
          process.execPath,
          // V8's compiler and collector on the main thread: they then run at the same points every
          // time (with helper threads, the same run counted twice differs by up to 20%; this way, by 2%).
          '--single-threaded',
          ...args,
        ],
      ]
    : [process.execPath, args];
  const child = spawn(command, argv, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH, HOME: os.tmpdir() },
  });
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk) => {
      text += chunk;
      if (!text.includes('\n')) return;
      child.stdout.off('data', onData);
      // The rest of the log is read and dropped (as a redirected log would be written).
      child.stdout.resume();
      const line = text.split('\n')[0];
      resolve({ child, url: line.startsWith('{') ? JSON.parse(line).url : line.trim() });
    };
    child.stdout.on('data', onData);
    child.once('exit', () => reject(new Error(`${args.join(' ')} exited`)));
  });
}

async function api(url, method, pathname, body, key = PRIVATE_KEY) {
  const response = await request(url + pathname, {
    method,
    headers: { 'svc-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${pathname}: ${response.statusCode} ${text}`);
  return JSON.parse(text);
}

/** utime + stime (clock ticks of 10 ms) of a process and its descendants, by pid. */
function treeCpu(root) {
  const children = new Map();
  const ticks = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      children.set(Number(fields[1]), [...(children.get(Number(fields[1])) ?? []), Number(entry)]);
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = new Map();
  for (const pending = [root]; pending.length > 0; ) {
    const pid = pending.pop();
    tree.set(pid, ticks.get(pid) ?? 0);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

// --cpu-only: no profiler (its sampling costs CPU too), only the CPU time per request.
const profiled = args.includes('--cpu-only') || counting ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
const json = { 'content-type': 'application/json' };
const reactorBody = JSON.stringify({
  args: {
    items: [
      { price: 2.5, quantity: 4 },
      { price: 1, quantity: 3 },
    ],
  },
});

/**
 * Starts the scenario's servers (the profiled one under cachegrind when counting) and what it
 * needs (a proxy, a token, a reactor); returns them and the load to run.
 */
async function setUp() {
  const servers = [];
  // bare-* scenarios profile the baseline server of the same figure instead of svc.
  const bare = scenario.startsWith('bare-');
  const svc = bare ? undefined : await start([...profiled, ...serveArgs(['--in-memory'])], counting);
  let target;
  let profiledServer = svc;
  if (scenario === 'bare-forwarder') {
    const destination = await start([path.join(here, 'servers.js'), 'destination']);
    servers.push(destination);
    profiledServer = await start(
      [...profiled, path.join(here, 'servers.js'), 'forwarder', `${destination.url}/charge`],
      counting,
    );
    const body = JSON.stringify({ amount: 1000, currency: 'usd', source: 'tok_visa', description: 'bench order' });
    target = { url: `${profiledServer.url}/charge`, method: 'POST', headers: json, body, connections: 16 };
  } else if (scenario === 'bare-canned') {
    profiledServer = await start([...profiled, path.join(here, 'servers.js'), 'canned', '300'], counting);
    target = { url: `${profiledServer.url}/tokens/x`, connections: 16 };
  } else if (scenario.startsWith('bare-function')) {
    profiledServer = await start([...profiled, path.join(here, 'servers.js'), 'function'], counting);
    target = {
      url: `${profiledServer.url}/react`,
      method: 'POST',
      headers: json,
      body: reactorBody,
      connections: scenario.endsWith('8') ? 8 : 1,
    };
  } else if (scenario.startsWith('proxy')) {
    const destination = await start([path.join(here, 'servers.js'), 'destination']);
    servers.push(destination);
    const proxy = await api(
      svc.url,
      'POST',
      '/proxies',
      { name: 'p', destination_url: `${destination.url}/charge` },
      MANAGEMENT_KEY,
    );
    const token = await api(svc.url, 'POST', '/tokens', { type: 'token', data: 'tok_visa' });
    const source = scenario === 'proxy-token' ? `{{ ${token.id} }}` : 'tok_visa';
    const body = JSON.stringify({ amount: 1000, currency: 'usd', source, description: 'bench order' });
    target = {
      url: `${svc.url}/proxy`,
      method: 'POST',
      headers: { ...json, 'svc-api-key': PRIVATE_KEY, 'svc-proxy-key': proxy.key },
      body,
      connections: 16,
    };
  } else if (scenario === 'get' || scenario === 'post') {
    const token = await api(svc.url, 'POST', '/tokens', { type: 'token', data: { note: 'bench' } });
    target =
      scenario === 'get'
        ? { url: `${svc.url}/tokens/${token.id}`, headers: { 'svc-api-key': PRIVATE_KEY }, connections: 16 }
        : {
            url: `${svc.url}/tokens`,
            method: 'POST',
            headers: { ...json, 'svc-api-key': PRIVATE_KEY },
            body: JSON.stringify({ type: 'token', data: { note: 'bench' } }),
            connections: 16,
            expect: 201,
          };
  } else {
    const reactor = await api(
      svc.url,
      'POST',
      '/reactors',
      { name: 'bench', code: reactorSource, configuration: {} },
      MANAGEMENT_KEY,
    );
    target = {
      url: `${svc.url}/reactors/${reactor.id}/react`,
      method: 'POST',
      headers: { ...json, 'svc-api-key': PRIVATE_KEY },
      body: reactorBody,
      connections: scenario === 'react8' ? 8 : 1,
    };
  }
  return { servers, svc, profiledServer, target };
}
const durationMs = Number(seconds) * 1000;

if (counting) {
  const warm = 6000;
  const short = await countedRun(warm);
  const long = await countedRun(warm + requests);
  process.stdout.write(
    `${scenario}: ${Math.round((long.count - short.count) / requests / 1000)}k instructions per request once warm (${(short.count / 1e9).toFixed(2)} G for ${warm} requests, ${(long.count / 1e9).toFixed(2)} G for ${warm + requests})\n`,
  );
  if (keep) {
    const out = (run) => path.join(dir, `cachegrind.out.${run.pid}`);
    process.stdout.write(
      `By function, for the ${requests} requests more: cg_diff ${out(short)} ${out(long)} > ${dir}/diff.out && cg_annotate ${dir}/diff.out\n`,
    );
  }
} else {
  await profiledRun();
}
if (!keep) await rm(dir, { recursive: true, force: true });

/** The instructions the profiled server ran from its start to its exit, with `requests` requests in between, and its pid. */
async function countedRun(requests) {
  const { servers, profiledServer, target } = await setUp();
  await load(target.url, { ...target, warmupMs: 0, requests });
  await stop(profiledServer, servers);
  const log = await readFile(path.join(dir, `valgrind-${profiledServer.child.pid}.log`), 'utf8');
  const count = /I\s+refs:\s+([\d,]+)/.exec(log)?.[1];
  if (count === undefined) throw new Error(`cachegrind counted nothing:\n${log}`);
  return { count: Number(count.replaceAll(',', '')), pid: profiledServer.child.pid };
}

async function stop(profiledServer, servers) {
  const exited = new Promise((resolve) => profiledServer.child.once('exit', resolve));
  profiledServer.child.kill('SIGTERM');
  await exited;
  for (const server of servers) server.child.kill('SIGTERM');
}

async function profiledRun() {
  const { servers, profiledServer, target } = await setUp();
  // CPU time of the server and its sandbox processes over the measured run: unlike the profile's
  // samples (wall time: a process waiting for a core looks busy), it is what the requests cost.
  let before;
  const result = await load(target.url, {
    ...target,
    durationMs,
    warmupMs: 1000,
    onStart: () => (before = treeCpu(profiledServer.child.pid)),
  });
  const after = treeCpu(profiledServer.child.pid);
  const cpu = [...after].map(([pid, ticks]) => [pid, ticks - (before.get(pid) ?? ticks)]);
  const perRequest = (ticks) => ((ticks * 10_000) / result.count).toFixed(1);
  process.stdout.write(
    `${scenario}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(3)} ms, p99 ${result.p99.toFixed(3)} ms\n`,
  );
  process.stdout.write(
    `CPU per request: ${perRequest(cpu.reduce((sum, [, ticks]) => sum + ticks, 0))} us (${cpu.map(([pid, ticks]) => `${pid === profiledServer.child.pid ? 'server' : `child ${pid}`} ${perRequest(ticks)}`).join(', ')})\n`,
  );
  await stop(profiledServer, servers);
  const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
  for (const file of files) {
    process.stdout.write(`\n${file} (${result.count} requests)\n`);
    process.stdout.write(
      summarize(JSON.parse(await readFile(path.join(dir, file), 'utf8')), { requests: result.count }),
    );
  }
}
