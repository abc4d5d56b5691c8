import { makeDirectory } from '../lib/make-directory.js';
import { lstat, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from './io/errors.js';

/** What `svc init` can scaffold, in the order it offers them (the first is the default). */
export const TEMPLATES = ['reactor', 'proxy', 'full'] as const;
export type TemplateName = (typeof TEMPLATES)[number];

export const TEMPLATE_SUMMARIES: Record<TemplateName, string> = {
  reactor: 'an Application, a reactor and its test (svc/testing)',
  proxy: 'an Application, a proxy with request and response transforms, its test (svc/testing)',
  full: 'both: a reactor, a proxy with its transforms, and the tests of each',
};

/** The folders of templates/init/ a template is made of; a later one wins where paths meet. */
const LAYERS: Record<TemplateName, string[]> = {
  reactor: ['common', 'reactor'],
  proxy: ['common', 'proxy'],
  full: ['common', 'reactor', 'proxy', 'full'],
};

/** The root of the running svc package: two folders up from dist/cli/ and from src/cli/ alike. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** templates/ of the package. */
export const TEMPLATES_DIR = path.join(PACKAGE_ROOT, 'templates');

/**
 * Where a new project's `npm install` gets svc (its tests import svc/testing): this very package,
 * as npm links a folder. svc is not on the public npm registry; CI sets its own (SVC_PACKAGE).
 */
export const SVC_PACKAGE = `file:${PACKAGE_ROOT.replace(/[\\/]+$/, '')}`;

const NAME_PLACEHOLDER = /__PROJECT_NAME__/g;
const PACKAGE_PLACEHOLDER = /__SVC_PACKAGE__/g;

export interface ScaffoldFile {
  /** Relative to the project, with `/` separators. */
  path: string;
  content: string;
}

/**
 * The files of a template with the project's name and where svc installs from (`svcPackage`, as
 * package.json's devDependencies say it) filled in, sorted by path, and the JSON Schema of svc.yaml
 * beside it (svc.yaml points editors at it). A leading `_` in a template's file name stands for a
 * dot: npm leaves files such as `.gitignore` out of a package.
 */
export async function templateFiles(
  template: TemplateName,
  name: string,
  { root = TEMPLATES_DIR, svcPackage = SVC_PACKAGE }: { root?: string; svcPackage?: string } = {},
): Promise<ScaffoldFile[]> {
  // Inside a JSON string (package.json): a path may hold quotes or backslashes.
  const packageText = JSON.stringify(svcPackage).slice(1, -1);
  const files = new Map<string, string>();
  for (const layer of LAYERS[template]) {
    const base = path.join(root, 'init', layer);
    for (const relative of await listFiles(base)) {
      const target = relative
        .split(path.sep)
        .map((part) => part.replace(/^_/, '.'))
        .join('/');
      const text = await readFile(path.join(base, relative), 'utf8');
      files.set(
        target,
        text.replace(NAME_PLACEHOLDER, name).replace(PACKAGE_PLACEHOLDER, () => packageText),
      );
    }
  }
  files.set('svc.schema.json', await readFile(path.join(root, 'svc.schema.json'), 'utf8'));
  return [...files].map(([file, content]) => ({ path: file, content })).sort((a, b) => a.path.localeCompare(b.path));
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...(await listFiles(dir, relative)));
    else if (entry.isFile()) found.push(relative);
  }
  return found;
}

/** An npm package name from a folder's name: lower case, and `-` for what a name cannot hold. */
export function projectNameOf(dir: string): string {
  const name = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '');
  return name === '' ? 'svc-project' : name.slice(0, 214);
}

/** Why `name` cannot be an npm package name, or undefined when it can. */
export function checkProjectName(name: string): string | undefined {
  if (name.length === 0 || name.length > 214) return 'must be 1 to 214 characters long';
  if (!/^(@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/.test(name)) {
    return 'may hold lower-case letters, digits and - . _ ~ only (not first: . or _), with an optional @scope/';
  }
  return undefined;
}

export interface WriteResult {
  /** Paths written, relative to the project, in order. */
  written: string[];
  /** Of those, the ones that existed before (only with `force`). */
  replaced: string[];
}

/**
 * Writes the files under `dir` (created if need be). Files that exist are a UserError naming them
 * all, before anything is written, unless `force`; even then a folder in a file's place is one.
 */
export async function writeScaffold(
  dir: string,
  files: ScaffoldFile[],
  options: { force: boolean },
): Promise<WriteResult> {
  const existing: string[] = [];
  for (const file of files) {
    const stat = await lstat(path.join(dir, file.path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw cannotWrite(dir, file.path, error);
    });
    if (stat?.isDirectory())
      throw new UserError(`Cannot write ${file.path} in ${dir}: a folder of that name is in the way.`);
    if (stat) existing.push(file.path);
  }
  if (existing.length > 0 && !options.force) {
    const them = existing.length === 1 ? 'it' : 'them';
    throw new UserError(
      `Not overwriting what exists in ${dir}: ${existing.join(', ')} (pass --force to replace ${them}).`,
    );
  }
  const written: string[] = [];
  for (const file of files) {
    const target = path.join(dir, file.path);
    try {
      await makeDirectory(path.dirname(target));
      // `wx` unless forced: a file that appeared since the check above is still never overwritten.
      await writeFile(target, file.content, { flag: options.force ? 'w' : 'wx' });
    } catch (error) {
      throw cannotWrite(dir, file.path, error as NodeJS.ErrnoException);
    }
    written.push(file.path);
  }
  return { written, replaced: existing };
}

const WHY: Record<string, string> = {
  EEXIST: 'it appeared meanwhile',
  ENOTDIR: 'a file is in the way of its folder',
  EACCES: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
};

function cannotWrite(dir: string, file: string, error: NodeJS.ErrnoException): UserError {
  return new UserError(`Cannot write ${file} in ${dir}: ${WHY[error.code ?? ''] ?? error.message}.`);
}
