// The test suite's own time (issue 37): `npm run test:unit` (the inner loop, target 20 s) and, as
// `node bench/run.js suite-full`, the whole suite as `npm test` runs it after its build (target
// 120 s on a quiet 2-core machine). Both are named benches, run only when asked for: the full one
// takes minutes. Wall time beside the CPU time the runs used (children included): on a busy machine
// the wall time grows while the CPU time does not, which tells load from a slower suite.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const VITEST = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');

/** Runs vitest once; its wall and CPU time (its process tree's), its exit code and its summary line. */
function runVitest(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [VITEST, 'run', '--config', 'test/vitest.config.ts', ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      resolve({
        code,
        wallMs,
        summary: /Tests\s+(.*)$/m.exec(out.replace(/\u001b\[[0-9;]*m/g, ''))?.[1]?.trim() ?? '',
      });
    });
  });
}

/** CPU time (user + system) of finished children so far, in ms (Linux: /proc/self/stat cutime+cstime). */
async function childCpuMs() {
  const { readFile } = await import('node:fs/promises');
  const fields = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1].split(' ');
  // Fields 16 and 17 of stat (cutime, cstime), counted from 'state' as index 0 here: 13 and 14.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

async function measure(record, figure, args, targetS) {
  const cpuBefore = await childCpuMs().catch(() => undefined);
  const { code, wallMs, summary } = await runVitest(args);
  const cpuAfter = await childCpuMs().catch(() => undefined);
  const cpu =
    cpuBefore === undefined || cpuAfter === undefined ? '' : `, ${Math.round((cpuAfter - cpuBefore) / 1000)} s of CPU`;
  const seconds = wallMs / 1000;
  record(
    figure,
    seconds,
    undefined,
    's',
    `<= ${targetS} s`,
    code === 0 && seconds <= targetS,
    `exit ${code}: ${summary}${cpu}`,
  );
}

export async function benchSuiteUnit({ record }) {
  await measure(record, 'npm run test:unit, wall time', ['--project', 'unit'], 20);
}

export async function benchSuiteFull({ record }) {
  await measure(record, 'npm test after its build (the whole suite), wall time', [], 120);
}
