/**
 * Which vitest project each test file belongs to, by rule (a file added later finds its place):
 * - attacks: the attack, escape, crash and fuzz suites (named so), each file isolated;
 * - unit: a file that starts nothing (no emulator, server, sandbox or process) and touches no
 *   process-wide state (module mocks, V8 flags): run in shared workers without isolation;
 * - integration: the rest, each file isolated.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export type Project = 'unit' | 'integration' | 'attacks';

const ATTACKS = /(attack|escape|crash|fuzz)[^/]*\.test\.tsx?$/;
/** Imports that start something: the harness's servers and processes, the runtime's, Node's network and processes. */
const STARTS =
  /(^|\/)helpers\/(emulator|process|pty|receiver|raw-http|event-stream|tls|tmpfs)\.js$|runtime\/helpers\.js$|attack-kit\.js$|^node:(child_process|http|https|http2|net|tls|dgram|worker_threads|cluster)$|(^|\/)src\/testing\/|^svc\/testing$|(^|\/)src\/(emulator\/)?index\.js$/;
/** Code that starts something or changes what every file in a shared worker would see. */
const SHARED_STATE =
  /\bcreateEmulator\(|\bnew Runtime\(|\bvi\.(mock|doMock|stubGlobal|stubEnv)\(|\bsetFlagsFromString\(|process\.chdir\(/;

/** Every module specifier a file imports (static, `export from`, dynamic). */
function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

/** Code without its comments (a comment naming createEmulator starts nothing). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** Whether a file of test/ (or a helper it imports from test/, and theirs) starts something. */
function startsSomething(file: string, read: (file: string) => string | undefined, seen = new Set<string>()): boolean {
  const text = read(file);
  if (text === undefined || seen.has(file)) return false;
  seen.add(file);
  // Type-only imports run nothing.
  const running = text.replace(/^import\s+type\s[^;]*;/gm, '');
  // Relative ones as the paths they name (`./helpers.js` in test/emulator/runtime is the runtime's harness).
  const named = specifiers(running).map((specifier) =>
    specifier.startsWith('.') ? path.posix.join(path.posix.dirname(file), specifier) : specifier,
  );
  if (named.some((specifier) => STARTS.test(specifier)) || SHARED_STATE.test(code(text))) return true;
  const helpers = named.filter((name) => name.startsWith('test/') && !name.includes('.test.'));
  return helpers.some((helper) => startsSomething(helper.replace(/\.m?js$/, '.ts'), read, seen));
}

export function projectOf(file: string, read: (file: string) => string | undefined): Project {
  if (ATTACKS.test(file)) return 'attacks';
  return startsSomething(file, read) ? 'integration' : 'unit';
}

/** The test files under `root`/test of each project, relative to `root`. */
export function projects(root: string): Record<Project, string[]> {
  const found: Record<Project, string[]> = { unit: [], integration: [], attacks: [] };
  const read = (file: string) => {
    for (const name of [file, file.replace(/\.ts$/, '.tsx')])
      if (existsSync(path.join(root, name))) return readFileSync(path.join(root, name), 'utf8');
    return undefined;
  };
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir))) {
      const file = `${dir}/${entry}`;
      if (statSync(path.join(root, file)).isDirectory()) walk(file);
      else if (/\.test\.tsx?$/.test(entry)) found[projectOf(file, read)].push(file);
    }
  };
  walk('test');
  return found;
}
