import { constants } from 'node:fs';
import { open, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { BODY_LIMIT_BYTES, BODY_LIMIT_LABEL } from '../api/limits.js';
import { parseEnvText, parsePair } from './configuration.js';
import { OutsideFolderError, UnreadableFileError } from './errors.js';

/**
 * The file reading that building a resource needs, apart from the pure bodies. Relative paths are taken
 * from `baseDir`: the working directory for the CLI, the folder of svc.yaml for `svc apply`.
 */

/** How a file may be read: within which folder (svc.yaml's files), and how much of it. */
export interface ReadLimits {
  /**
   * The folder the file must be in once every symlink is resolved (svc.yaml's folder for what
   * svc.yaml names); none for a file the user typed on the command line.
   */
  within?: string;
  /** Default: the payload limit (5 MB), more than any request can carry. */
  maxBytes?: number;
}

/** The text of a code file (a reactor, a proxy transform). */
export function readCodeFile(file: string, baseDir: string, limits: ReadLimits = {}): Promise<string> {
  return readRegularFile(path.resolve(baseDir, file), 'code', limits);
}

/** A `.env` file as a configuration map. */
export async function readEnvFile(
  file: string,
  baseDir: string,
  limits: ReadLimits = {},
): Promise<Record<string, string>> {
  return parseEnvText(await readRegularFile(path.resolve(baseDir, file), 'configuration', limits));
}

/**
 * Configuration from `KEY=VALUE` pairs and `@file.env` names, in order, later values winning;
 * `undefined` when none are given (so an update keeps the current configuration).
 */
export async function readConfiguration(
  values: readonly string[] | undefined,
  baseDir: string,
  label: string,
): Promise<Record<string, string> | undefined> {
  if (values === undefined) return undefined;
  const configuration: Record<string, string> = {};
  for (const value of values) {
    if (value.startsWith('@')) {
      Object.assign(configuration, await readEnvFile(value.slice(1), baseDir));
      continue;
    }
    const [key, text] = parsePair(value, label, 'KEY=VALUE or @file.env');
    configuration[key] = text;
  }
  return configuration;
}

/**
 * A file's text, when it is a regular file of at most `maxBytes`: a FIFO would hang the read for
 * ever, a device (`/dev/urandom`) never end, `/proc/self/environ` hand over the whole environment,
 * and a file that only ends past the limit is not read past it. With `within`, the file must be in
 * that folder once symlinks are resolved. Throws an UnreadableFileError saying why, in words.
 */
export async function readRegularFile(file: string, role: string, limits: ReadLimits = {}): Promise<string> {
  const refuse = (reason: string) => new UnreadableFileError(file, role, new Error(reason));
  const maxBytes = limits.maxBytes ?? BODY_LIMIT_BYTES;
  // Looked at before it is opened: opening a FIFO waits for a writer, opening a device may act.
  const before = await stat(file).catch((error: unknown) => {
    throw new UnreadableFileError(file, role, error);
  });
  const kind = notRegular(before);
  if (kind) throw refuse(`it is ${kind}, not a regular file`);
  const real = await realpath(file).catch((error: unknown) => {
    throw new UnreadableFileError(file, role, error);
  });
  const pseudo = PSEUDO_FOLDERS.find((folder) => real === folder || real.startsWith(`${folder}/`));
  if (pseudo) throw refuse(`it is in ${pseudo}, not a file on disk`);
  if (limits.within !== undefined) await checkWithin(file, real, role, limits.within);
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO put in the file's place since the look above opens at once (and is refused).
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UnreadableFileError(file, role, error);
  }
  try {
    const opened = await handle.stat();
    const now = notRegular(opened);
    if (now) throw refuse(`it is ${now}, not a regular file`);
    // The file opened is the one checked (not another put there since): same device and inode.
    if (opened.ino !== before.ino || opened.dev !== before.dev) throw refuse('it changed while it was read; try again');
    const bytes = await readAtMost(handle, maxBytes);
    if (bytes === undefined) throw refuse(`it is larger than ${limitLabel(maxBytes)}`);
    return bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UnreadableFileError) throw error;
    throw new UnreadableFileError(file, role, error);
  } finally {
    await handle.close();
  }
}

/** Kernel views that look like files but are not files on disk (what they hold is the machine's). */
const PSEUDO_FOLDERS = ['/proc', '/sys', '/dev'];

/** What a file is, in words, when it is not a regular file; undefined when it is one. */
function notRegular(stats: {
  isFile(): boolean;
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a file';
}

/** Refuses a file outside `folder` once symlinks are resolved (the folder's own resolved too). */
async function checkWithin(file: string, real: string, role: string, folder: string): Promise<void> {
  const realFolder = await realpath(folder).catch(() => path.resolve(folder));
  const relative = path.relative(realFolder, real);
  if (relative === '' || relative.startsWith(`..${path.sep}`) || relative === '..' || path.isAbsolute(relative)) {
    throw new OutsideFolderError(file, role, folder, real);
  }
}

/** Up to `max` bytes of the file; undefined when there are more (nothing past max + 1 is read). */
async function readAtMost(handle: FileHandle, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buffer = Buffer.alloc(Math.min(64 * 1024, max + 1 - total));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) return undefined;
  }
}

function limitLabel(bytes: number): string {
  return bytes === BODY_LIMIT_BYTES ? BODY_LIMIT_LABEL : `${bytes} bytes`;
}
