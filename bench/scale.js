// The sandbox at the scale of a project: a new reactor's create-to-first-answer, 100 reactors of one
// tenant called round-robin, `svc apply` of 40 reactors, and the memory of 100 warm reactors. Each
// figure is measured for the default layout (a tenant's code shares a process, a compartment per
// version) beside the layout of one process per owner (`svc serve --sandbox-isolation owner`), in
// the same run.
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { median } from './load.js';
import { MANAGEMENT_KEY, PRIVATE_KEY, SVC } from './serve-args.js';

const CODE = 'let calls = 0;\nmodule.exports = async (req) => ({ raw: { n: req.args.n, calls: ++calls } });\n';

/** The 50th percentile of `samples` (ms). */
function p50(samples) {
  return median(samples);
}

/**
 * Runs the figures against one running `svc serve` (`url`, `pid`), with `helpers` from run.js:
 * api(), processTreeMemory(). Answers the raw figures.
 */
export async function measureScale({ url, pid, api, processTreeMemory, scratch, quick, layout }) {
  const reactors = quick ? 30 : 100;
  const created = [];
  const timed = async (task) => {
    const started = performance.now();
    await task();
    return performance.now() - started;
  };
  const create = async (name) => {
    const reactor = await api(url, 'POST', '/reactors', {
      key: MANAGEMENT_KEY,
      body: { name, code: CODE, configuration: {} },
      expect: 201,
    });
    created.push(reactor.id);
    return reactor.id;
  };
  const react = (id, n) =>
    api(url, 'POST', `/reactors/${id}/react`, { key: PRIVATE_KEY, body: { args: { n } }, expect: 200 });

  // A new reactor: create, then its first answer (the save-to-served path of a new file).
  const firstAnswer = [];
  for (let i = 0; i < (quick ? 10 : 30); i++) {
    firstAnswer.push(
      await timed(async () => {
        const id = await create(`${layout}-new-${i}`);
        await react(id, i);
      }),
    );
  }
  // Up to `reactors` in all, each called once (its first call), then round-robin passes.
  while (created.length < reactors) await react(await create(`${layout}-many-${created.length}`), 0);
  const roundRobin = [];
  // One pass where every call is a process boot (one process per owner, past the budget): it says all it can.
  const passes = layout === 'owner' ? 1 : quick ? 2 : 4;
  for (let pass = 0; pass < passes; pass++)
    for (const id of created) roundRobin.push(await timed(() => react(id, pass)));
  const memory = processTreeMemory(pid);

  // `svc apply` of 40 reactors into a new tenant's worth of names, as a process (the CLI's start included).
  const project = path.join(scratch, `apply-${layout}`);
  await mkdir(path.join(project, 'reactors'), { recursive: true });
  const names = Array.from({ length: 40 }, (_, i) => `applied-${layout}-${i}`);
  for (const name of names) await writeFile(path.join(project, 'reactors', `${name}.js`), CODE);
  await writeFile(
    path.join(project, 'svc.yaml'),
    `reactors:\n${names.map((name) => `  ${name}:\n    code: reactors/${name}.js\n`).join('')}`,
  );
  const applyStarted = performance.now();
  const applied = spawnSync(
    process.execPath,
    [SVC, 'apply', '--yes', '--base-url', url, '--management-key', MANAGEMENT_KEY],
    { cwd: project, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  );
  const applyMs = performance.now() - applyStarted;
  if (applied.status !== 0) throw new Error(`svc apply failed: ${applied.stderr || applied.stdout}`);

  return {
    firstAnswerMs: p50(firstAnswer),
    roundRobinMs: p50(roundRobin),
    reactors,
    rss: memory.rss,
    processes: memory.processes,
    applyMs,
  };
}
