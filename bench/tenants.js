// Many active tenants (issue 36): `tenants` tenants, each with one reactor, called round-robin
// (one call at a time, every tenant in turn), against one running `svc serve`. The figure is the p50
// of a call after each tenant's first, and the calls a second; 8 tenants (the old budget of 8
// processes) is the baseline of 50.
import { median } from './load.js';

const CODE = 'let calls = 0;\nmodule.exports = async (req) => ({ raw: { n: req.args.n, calls: ++calls } });\n';

/**
 * Runs `passes` round-robin passes over `tenants` new tenants of the emulator at `url` (`api`
 * from run.js), each tenant's first two calls (its process's boot, and its settling) left out. Answers p50 (ms), calls a
 * second, and the sandbox processes the emulator runs at the end (`processTreeMemory`).
 */
export async function measureTenants({ url, pid, api, processTreeMemory, tenants, passes, label }) {
  const callers = [];
  for (let i = 0; i < tenants; i++) {
    const tenant = await api(url, 'POST', '/_emulator/tenants', {
      key: null,
      body: { name: `${label}-${i}` },
      expect: 201,
    });
    const reactor = await api(url, 'POST', '/reactors', {
      key: tenant.management_key,
      body: { name: `rr-${i}`, code: CODE, configuration: {} },
      expect: 201,
    });
    const call = (n) =>
      api(url, 'POST', `/reactors/${reactor.id}/react`, {
        key: tenant.private_key,
        body: { args: { n } },
        expect: 200,
      });
    await call(0);
    callers.push(call);
  }
  // One pass more left out: a process just booted settles (its first collections, its code compiled).
  for (const call of callers) await call(0);
  const samples = [];
  const started = performance.now();
  for (let pass = 1; pass <= passes; pass++) {
    for (const call of callers) {
      const at = performance.now();
      await call(pass);
      samples.push(performance.now() - at);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const memory = processTreeMemory(pid);
  return { p50: median(samples), rps: samples.length / seconds, processes: memory.processes, rss: memory.rss };
}
