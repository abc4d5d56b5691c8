import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { areaOf, importsOf, oversized, sourceFiles } from './import-graph.mjs';
import { wallClockAssertions, wallClockAssertionsIn } from './wall-clock-guard.js';

/**
 * The dependency rule (DESIGN.md section 1, ARCHITECTURE.md): which areas of src/ each area may
 * import, besides its own files. `cli -> (apply | requests | client | emulator | ui) -> api`, `apply ->
 * requests -> client`, `api` depends on
 * nothing; in the emulator `http -> proxy -> services -> (store | runtime) -> crypto`, everything
 * over the kernel (errors, events, header and body checks) and `lib`.
 */
const EMULATOR_BASE = ['api', 'lib', 'expressions', 'emulator/kernel'];
const ALLOWED: Record<string, readonly string[]> = {
  api: [],
  lib: [],
  expressions: ['api', 'lib'],
  client: ['api', 'lib'],
  ui: ['api', 'lib'],
  // What the CLI and svc apply both build from plain input (request bodies, files, name lookups).
  requests: ['api', 'lib', 'client'],
  apply: ['api', 'lib', 'expressions', 'client', 'requests'],
  // The CLI reaches the emulator through its entry only (createEmulator and its types).
  cli: ['api', 'lib', 'client', 'ui', 'apply', 'requests', 'emulator'],
  // The library entry (src/index.ts).
  index: ['api', 'client', 'emulator'],
  // svc/testing: the emulator through its entry, svc.yaml through the apply engine.
  testing: ['api', 'lib', 'client', 'apply', 'requests', 'emulator', 'emulator/outbound', 'emulator/recording'],
  // createEmulator: where the emulator is assembled, it may use every part of it.
  emulator: [
    ...EMULATOR_BASE,
    'emulator/http',
    'emulator/proxy',
    'emulator/services',
    'emulator/store',
    'emulator/runtime',
    'emulator/crypto',
    'emulator/outbound',
    'emulator/leaks',
    'emulator/recording',
    'emulator/replay',
  ],
  'emulator/kernel': ['api', 'lib'],
  'emulator/http': [
    ...EMULATOR_BASE,
    'emulator/proxy',
    'emulator/services',
    'emulator/store',
    'emulator/runtime',
    'emulator/crypto',
    'emulator/leaks',
    'emulator/replay',
  ],
  'emulator/proxy': [
    ...EMULATOR_BASE,
    'emulator/services',
    'emulator/store',
    'emulator/runtime',
    'emulator/crypto',
    'emulator/outbound',
    'emulator/leaks',
  ],
  'emulator/services': [
    ...EMULATOR_BASE,
    'emulator/store',
    'emulator/runtime',
    'emulator/crypto',
    'emulator/outbound',
    'emulator/leaks',
  ],
  // The one door out (the forwarder, its interceptors): the runtime reaches it only as a function it is given.
  'emulator/outbound': ['api', 'lib', 'emulator/kernel', 'emulator/leaks'],
  // The leak guard: a call's plaintext and its forms (pure), the sinks' checks; below every layer that has a sink.
  'emulator/leaks': ['api', 'lib', 'emulator/kernel'],
  // Recording and replaying destinations: interceptors on the one door out, redacting with the leak guard's sets.
  'emulator/recording': ['api', 'lib', 'emulator/kernel', 'emulator/outbound', 'emulator/leaks'],
  // svc replay: calls kept as they pass (hooks of the pipeline and the reactor invocation, an
  // interceptor of the gateway) and re-run through them; above proxy and services, below http.
  'emulator/replay': [
    ...EMULATOR_BASE,
    'emulator/proxy',
    'emulator/services',
    'emulator/store',
    'emulator/outbound',
    'emulator/leaks',
    'emulator/recording',
  ],
  'emulator/store': [...EMULATOR_BASE, 'emulator/crypto'],
  'emulator/crypto': ['emulator/kernel', 'lib'],
  // The sandbox imports lib and its own files (and see EXCEPTIONS, and the host's own check below).
  'emulator/runtime': ['lib'],
};

/** Single files a file may import beyond its area's, each with its reason. */
const EXCEPTIONS: Record<string, readonly string[]> = {
  // UserCodeError is an HttpError (answered by the HTTP layer like any other) of a problem type.
  'emulator/runtime/user-code-error.ts': ['emulator/errors.ts', 'api/problem.ts'],
};

/** Packages `api` and `lib` may import: none (node: builtins only), so that every side can use them. */
const LEAVES = new Set(['api', 'lib']);

/** An area as a reader finds it in the tree. */
function label(area: string): string {
  if (area === 'emulator') return 'emulator/index.ts (and start.ts, options.ts)';
  if (area === 'emulator/kernel') return 'emulator/*.ts';
  return area.includes('.') ? area : `${area}/`;
}

interface Violation {
  file: string;
  imports: string;
  why: string;
}

function violations(): Violation[] {
  const found: Violation[] = [];
  for (const file of sourceFiles()) {
    const area = areaOf(file);
    const allowed = ALLOWED[area];
    for (const { specifier, target, missing } of importsOf(file)) {
      if (missing) {
        found.push({ file, imports: specifier, why: 'it names no file' });
        continue;
      }
      if (target === undefined) {
        if (LEAVES.has(area) && !specifier.startsWith('node:'))
          found.push({ file, imports: specifier, why: `${label(area)} imports node: builtins only` });
        continue;
      }
      const targetArea = areaOf(target);
      if (allowed === undefined) {
        found.push({
          file,
          imports: `src/${target}`,
          why: `the area ${area} has no place in the dependency rule (test/architecture.test.ts)`,
        });
      } else if (targetArea !== area && !allowed.includes(targetArea) && !EXCEPTIONS[file]?.includes(target)) {
        const may = [...allowed, ...(EXCEPTIONS[file] ?? [])].map(label).join(', ');
        found.push({ file, imports: `src/${target}`, why: `${label(area)} may import only ${may || 'its own files'}` });
      }
      // Routes stand side by side: what two of them share lives in http/, not in one of them.
      // routes/index.ts is the table that gathers them.
      if (
        file.startsWith('emulator/http/routes/') &&
        file !== 'emulator/http/routes/index.ts' &&
        target.startsWith('emulator/http/routes/')
      ) {
        found.push({ file, imports: `src/${target}`, why: 'a route file does not import a sibling route file' });
      }
    }
  }
  return found;
}

/** Every file the sandbox host process loads, from its entry: it may read runtime/ and lib/ only. */
function hostClosure(entry: string): string[] {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    for (const { target } of importsOf(queue.pop()!)) {
      if (target !== undefined && !seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  }
  return [...seen].sort();
}

const readable = (list: Violation[]) =>
  list.map(({ file, imports, why }) => `src/${file} imports ${imports}: ${why}`).join('\n');

describe('the dependency rule', () => {
  it('sees the whole tree (the checks below are not vacuous)', () => {
    const files = sourceFiles();
    expect(files).toEqual(
      expect.arrayContaining(['cli/main.ts', 'emulator/index.ts', 'emulator/http/front.ts', 'api/headers.ts']),
    );
    expect(
      files.flatMap((file) => importsOf(file)).filter(({ target }) => target !== undefined).length,
    ).toBeGreaterThan(300);
  });

  it('holds for every import in src/', () => {
    const found = violations();
    expect(found, `\n${readable(found)}\n`).toEqual([]);
  });

  it('keeps the sandbox host process to runtime/ and lib/ (the only folders it may read)', () => {
    const outside = hostClosure('emulator/runtime/host.ts').filter(
      (file) => !file.startsWith('emulator/runtime/') && !file.startsWith('lib/'),
    );
    expect(outside).toEqual([]);
  });
});

describe('the size of what a reader reads at once', () => {
  it('keeps every file in src/ within 400 lines and every function within 100', () => {
    expect(oversized(400, 100)).toEqual([]);
  });

  it('finds what is over (the check is not vacuous)', () => {
    expect(oversized(50, 20).length).toBeGreaterThan(10);
  });
});

describe('tests whose verdict does not depend on how busy the machine is', () => {
  const testDir = fileURLToPath(new URL('.', import.meta.url));

  it('no test file asserts a bound on a time it measured with the wall clock (timing goals go in npm run bench)', () => {
    const found = wallClockAssertionsIn(testDir).map(({ file, line, text }) => `test/${file}:${line}: ${text}`);
    expect(found, `\n${found.join('\n')}\n`).toEqual([]);
  });

  it('finds such an assertion, directly or through the names a time is kept in (the check is not vacuous)', () => {
    const caught = (text: string) => wallClockAssertions('sample.test.ts', text).map(({ line }) => line);
    expect(caught('const t0 = Date.now();\nawait work();\nexpect(Date.now() - t0).toBeLessThan(500);')).toEqual([3]);
    expect(
      caught(
        'const start = performance.now();\nawait work();\nconst elapsed = performance.now() - start;\nexpect(elapsed).not.toBeLessThanOrEqual(9);\nexpect(100).toBeGreaterThan(elapsed);',
      ),
    ).toEqual([4, 5]);
    expect(caught('const t = process.hrtime();\nconst [s] = process.hrtime(t);\nexpect(s).toBeLessThan(1);')).toEqual([
      3,
    ]);
    expect(
      caught('let began = 0;\nbegan = Date.now();\nconst ms = Date.now() - began;\nexpect(ms).toBeLessThan(50);'),
    ).toEqual([4]);
    // A stamp compared with the clock is not a measurement of how long something took, nor is what a
    // callback that reads the clock returns.
    expect(
      caught('const made = items.map(() => Date.now());\nexpect(Math.abs(made[0] - Date.now())).toBeLessThan(9);'),
    ).toEqual([]);
    expect(caught('expect(Math.abs(Date.parse(body.created_at) - Date.now())).toBeLessThan(60_000);')).toEqual([]);
    expect(
      caught('const t0 = Date.now();\nawait sleep(100);\nexpect(Date.now() - t0).toBeGreaterThanOrEqual(100);'),
    ).toEqual([]);
  });
});
