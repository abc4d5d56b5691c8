// The import graph of src/: every file's imports, relative ones resolved to files. Used by
// test/architecture.test.ts (the dependency rule) and run by `npm run deps`, which prints the
// graph between areas (cli, client, emulator/http, ...) with how many files make each edge
// (`-- --files` lists them; `-- --src DIR` reads another tree, e.g. an older commit's src/).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const srcFlag = process.argv.indexOf('--src');
export const SRC =
  srcFlag > 0 && process.argv[srcFlag + 1]
    ? path.resolve(process.argv[srcFlag + 1])
    : fileURLToPath(new URL('../src/', import.meta.url));

/** Every .ts and .tsx file under `dir`, relative to SRC with `/` separators. */
export function sourceFiles(dir = SRC) {
  const files = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) files.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry) && !entry.endsWith('.d.ts'))
      files.push(path.relative(SRC, full).split(path.sep).join('/'));
  }
  return files.sort();
}

/**
 * The imports of one file: static, `export ... from`, dynamic `import()` and `typeof import()`
 * alike (TypeScript's own scanner, so specifiers in comments and strings are not taken for
 * imports). A relative specifier is resolved to the file it names (`./x.js` -> `dir/x.ts`);
 * `target` is undefined for packages and node: builtins, and `missing` is set when a relative
 * one names no file.
 */
export function importsOf(file) {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map(({ fileName: specifier }) => {
    if (!specifier.startsWith('.')) return { specifier, target: undefined };
    const base = path.join(path.dirname(path.join(SRC, file)), specifier).replace(/\.js$/, '');
    const found = ['.ts', '.tsx', '/index.ts'].map((ext) => base + ext).find((candidate) => existsSync(candidate));
    if (!found) return { specifier, target: undefined, missing: true };
    return { specifier, target: path.relative(SRC, found).split(path.sep).join('/') };
  });
}

/**
 * Files of more than `maxLines` lines, and functions (declarations, methods, arrows) of more than
 * `maxFunctionLines`, each as `file:line (n lines)`: the bounds a reader keeps in one view.
 */
export function oversized(maxLines, maxFunctionLines) {
  const found = [];
  for (const file of sourceFiles()) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > maxLines) found.push(`${file} (${lines} lines)`);
    const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.end).line;
        if (last - first + 1 > maxFunctionLines)
          found.push(`${file}:${first + 1} (a function of ${last - first + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The emulator's entry: createEmulator and its options, where the parts are assembled. */
const EMULATOR_ENTRY = new Set(['index.ts', 'start.ts', 'options.ts']);

/**
 * The area a file belongs to, as the dependency rule names them: the top folder (`cli`, `api`),
 * in the emulator its layer (`emulator/http`), `emulator` for its entry (index.ts, options.ts)
 * and `emulator/kernel` for its other top-level modules (errors, events, header and body checks).
 */
export function areaOf(file) {
  const parts = file.split('/');
  if (parts.length === 1) return parts[0].replace(/\.tsx?$/, '');
  if (parts[0] !== 'emulator') return parts[0];
  if (parts.length > 2) return `emulator/${parts[1]}`;
  return EMULATOR_ENTRY.has(parts[1]) ? 'emulator' : 'emulator/kernel';
}

/** `from -> to` between areas, with the files that make each edge. */
export function areaGraph() {
  const edges = new Map();
  for (const file of sourceFiles()) {
    for (const { target } of importsOf(file)) {
      if (target === undefined || areaOf(target) === areaOf(file)) continue;
      const edge = `${areaOf(file)} -> ${areaOf(target)}`;
      if (!edges.has(edge)) edges.set(edge, new Set());
      edges.get(edge).add(file);
    }
  }
  return new Map([...edges].sort(([a], [b]) => a.localeCompare(b)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const verbose = process.argv.includes('--files');
  for (const [edge, files] of areaGraph()) {
    process.stdout.write(`${edge.padEnd(44)} ${verbose ? [...files].join(' ') : files.size}\n`);
  }
}
