import type { DurableFileSystem } from '../../lib/durable-file.js';
import { LIBRARY_NAMES, type OptionNamer } from '../errors.js';

/**
 * The file operations through which every store write reaches the disk (node:fs by default); tests
 * inject disk failures here.
 */
export type StoreFileSystem = DurableFileSystem;

/** What an errno means to someone who has to fix it. */
const CAUSES: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EIO: 'an input/output error of the disk',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'a folder stands where a file must go',
};

/** `the disk is full (ENOSPC)`; the error's own message when its code is not one of the usual. */
export function describeCause(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const cause = code === undefined ? undefined : CAUSES[code];
  if (cause !== undefined) return `${cause} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** How to get past a cause, where there is something to do; options said by `name`. */
export function remedyFor(error: unknown, name: OptionNamer = LIBRARY_NAMES): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free some disk space';
    case 'EROFS':
      return `make the data folder writable (or give another ${name('data')}, or ${name('inMemory')})`;
    case 'EACCES':
    case 'EPERM':
      return 'give the user running svc write access to the data folder';
    default:
      return 'fix the cause';
  }
}
