// A tenant per test for any language (issue 41 item 4): over HTTP against a running `svc serve`, a
// template tenant of 3 Applications, a reactor and a proxy is made once; then its fork
// (`POST /_emulator/tenants/{id}/forks`) beside a bare tenant (`POST /_emulator/tenants`), each
// deleted again, and a fork's first reactor call beside its second, with the sandbox processes
// counted before and after.
import { median } from './load.js';

const CODE = 'module.exports = async (req) => ({ raw: { n: req.args.n } });\n';

async function timed(task) {
  const started = performance.now();
  const value = await task();
  return [performance.now() - started, value];
}

/**
 * `api` and `processTreeMemory` are run.js's; `pid` the emulator's. Answers p50s in ms: the fork and
 * the bare tenant, a fork's first and second reactor call, and the processes before and after.
 */
export async function measureForks({ url, pid, api, processTreeMemory, quick }) {
  const template = await api(url, 'POST', '/_emulator/tenants', { key: null, body: { name: 'template' }, expect: 201 });
  const manage = { key: template.management_key };
  const reactor = await api(url, 'POST', '/reactors', {
    ...manage,
    body: { name: 'echo', code: CODE, configuration: {} },
    expect: 201,
  });
  await api(url, 'POST', '/proxies', {
    ...manage,
    body: { name: 'outbound', destination_url: 'http://127.0.0.1:9/', require_auth: false },
    expect: 201,
  });
  await api(url, 'POST', '/applications', {
    ...manage,
    body: { name: 'reader', type: 'private', permissions: ['token:read'] },
    expect: 201,
  });
  // The template's process booted, and its code compiled, before anything is timed.
  await api(url, 'POST', `/reactors/${reactor.id}/react`, {
    key: template.private_key,
    body: { args: { n: 0 } },
    expect: 200,
  });
  const fork = () =>
    api(url, 'POST', `/_emulator/tenants/${template.id}/forks`, { ...manage, body: { name: 'test' }, expect: 201 });
  const remove = (tenant) =>
    api(url, 'DELETE', `/_emulator/tenants/${tenant.id}`, { key: tenant.management_key, expect: 204 });
  const bare = () => api(url, 'POST', '/_emulator/tenants', { key: null, body: { name: 'bare' }, expect: 201 });
  for (let i = 0; i < 50; i++) await remove(await fork());

  const forkMs = [];
  const bareMs = [];
  for (let i = 0; i < (quick ? 300 : 1000); i++) {
    const [forkTime, forked] = await timed(fork);
    const [bareTime, made] = await timed(bare);
    forkMs.push(forkTime);
    bareMs.push(bareTime);
    await remove(forked);
    await remove(made);
  }

  const processesBefore = processTreeMemory(pid).processes;
  const firstMs = [];
  const secondMs = [];
  for (let i = 0; i < (quick ? 50 : 200); i++) {
    const forked = await fork();
    const call = (n) =>
      api(url, 'POST', `/reactors/${forked.reactors[0].id}/react`, {
        key: forked.private_key,
        body: { args: { n } },
        expect: 200,
      });
    firstMs.push((await timed(() => call(1)))[0]);
    secondMs.push((await timed(() => call(2)))[0]);
    await remove(forked);
  }
  const processesAfter = processTreeMemory(pid).processes;
  return {
    forkP50: median(forkMs),
    bareP50: median(bareMs),
    firstP50: median(firstMs),
    secondP50: median(secondMs),
    processesBefore,
    processesAfter,
  };
}
