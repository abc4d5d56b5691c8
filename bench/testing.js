// svc/testing (issue 28): what a test pays for a platform of its own, in the test process. A
// template of 3 Applications, 5 reactors and 2 proxies (test/testing/fixture) is applied once;
// then svc.tenant() (a fork of it) beside a bare tenant made in process, a fork's first reactor call
// beside a warm one, per-call drift over 10,000 calls, and a suite of 1,000 tests of 10 calls each.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.resolve(here, '..', 'test', 'testing', 'fixture', 'svc.yaml');

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function timed(task) {
  const started = performance.now();
  await task();
  return performance.now() - started;
}

/** Runs the figures; `record(figure, value, baseline, unit, target, holds, note)` as run.js's. */
export async function benchTesting({ record, quick }) {
  // The proxies are not called here: their destination only needs to be a URL.
  process.env.SVC_TESTING_DESTINATION ??= 'http://127.0.0.1:9/';
  const { startSvc } = await import('../dist/testing/index.js');
  const started = performance.now();
  const svc = await startSvc({ config: FIXTURE });
  const startMs = performance.now() - started;
  const { templateId } = svc;
  try {
    // Warm-up: the fork's path and the HTTP client's sockets.
    for (let i = 0; i < 50; i++) await (await svc.tenant()).dispose();

    // As a suite uses it: a tenant, the test's work (here one call), its dispose; tenant() timed.
    const forks = quick ? 500 : 2000;
    const tenantMs = [];
    for (let i = 0; i < forks; i++) {
      let tenant;
      tenantMs.push(await timed(async () => (tenant = await svc.tenant())));
      await tenant.reactors.invoke('noop');
      await tenant.dispose();
    }
    // The fork itself (one store write, no spare), beside a bare tenant made in process.
    const forkMs = [];
    const bareMs = [];
    for (let i = 0; i < forks; i++) {
      let fork;
      forkMs.push(await timed(async () => (fork = await svc.emulator.tenants.fork(templateId))));
      bareMs.push(await timed(() => svc.emulator.tenants.create()));
      await svc.emulator.tenants.delete(fork.id);
    }
    const tenantP50 = percentile(tenantMs, 50);
    const tenantP99 = percentile(tenantMs, 99);
    const note = `${Math.round(startMs)} ms to start; load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`;
    record(
      'svc.tenant(), p50 (3 Applications, 5 reactors, 2 proxies)',
      tenantP50,
      percentile(forkMs, 50),
      'ms',
      '<= 1 ms',
      tenantP50 <= 1,
      `baseline: the fork itself, no spare; ${note}`,
    );
    record('svc.tenant(), p99', tenantP99, percentile(forkMs, 99), 'ms', '<= 5 ms', tenantP99 <= 5);
    record(
      'emulator.tenants.fork() of that template, p50',
      percentile(forkMs, 50),
      percentile(bareMs, 50),
      'ms',
      '',
      true,
      'baseline: a bare tenant (2 Applications) made in process',
    );
    record('emulator.tenants.fork(), p99', percentile(forkMs, 99), percentile(bareMs, 99), 'ms', '', true);

    const firsts = [];
    const warms = [];
    for (let i = 0; i < (quick ? 50 : 200); i++) {
      const t = await svc.tenant();
      firsts.push(await timed(() => t.reactors.invoke('noop')));
      warms.push(await timed(() => t.reactors.invoke('noop')));
      await t.dispose();
    }
    const firstP50 = percentile(firsts, 50);
    const warmP50 = percentile(warms, 50);
    record(
      "A fork's first reactor call, p50",
      firstP50,
      warmP50,
      'ms',
      'no cold start',
      firstP50 <= warmP50 + 10,
      "baseline: its second call; the fork's code is compiled in the template's warm process",
    );

    const calls = quick ? 2000 : 10_000;
    const t = await svc.tenant();
    // Warmed first (the JIT, the sockets): drift is what grows as calls go on, not the warm-up.
    for (let i = 0; i < 2000; i++) await t.reactors.invoke('echo', { i });
    const perCall = [];
    for (let i = 0; i < calls; i++) perCall.push(await timed(() => t.reactors.invoke('echo', { i })));
    await t.dispose();
    const tenth = Math.floor(calls / 10);
    const early = percentile(perCall.slice(0, tenth), 50);
    const late = percentile(perCall.slice(-tenth), 50);
    const drift = (late / early - 1) * 100;
    record(
      `Per-call p50, last ${tenth} of ${calls} calls`,
      late,
      early,
      'ms',
      '< 10% drift',
      Math.abs(drift) < 10,
      `baseline: the first ${tenth}; drift ${drift.toFixed(1)}%`,
    );

    const tests = quick ? 200 : 1000;
    const suiteMs = await timed(async () => {
      for (let i = 0; i < tests; i++) {
        const tenant = await svc.tenant();
        for (let call = 0; call < 10; call++) await tenant.reactors.invoke(call % 2 ? 'counter' : 'echo', { call });
        await tenant.dispose();
      }
    });
    const target = quick ? 4000 : 20_000;
    record(
      `A suite of ${tests} tests (a tenant each, 10 calls each), one worker`,
      suiteMs,
      undefined,
      'ms',
      `<= ${target} ms`,
      suiteMs <= target,
    );
  } finally {
    await svc.stop();
  }
}
