import path from 'node:path';
import type { StoreFileSystem } from '../../src/emulator/store/io.js';
import { nodeFileSystem } from '../../src/lib/durable-file.js';

export type FileOp = keyof StoreFileSystem;

/** A failure to inject: which operation on which file fails, with which errno code. */
interface Fault {
  match: (op: FileOp, file: string) => boolean;
  code: string;
}

/**
 * The store's file operations over the real disk, with failures injected on demand: a write of
 * a chosen file fails as it would on a full (ENOSPC) or read-only (EROFS) disk, the rest goes
 * through node:fs. Rules see a temp file as the file it is written for, so `failWrites(file)`
 * fails every step of writing that file.
 */
export class FaultyFileSystem implements StoreFileSystem {
  /** Every operation asked for, with its target file, in order. */
  readonly calls: { op: FileOp; file: string }[] = [];
  private faults: Fault[] = [];

  /** Makes the operations `match` picks fail with `code` until `heal()`. */
  fail(match: (op: FileOp, file: string) => boolean, code = 'ENOSPC'): void {
    this.faults.push({ match, code });
  }

  /** Fails every write of a file (its temp file's creation) for which `which` holds. */
  failWrites(which: (file: string) => boolean, code = 'ENOSPC'): void {
    this.fail((op, file) => op === 'writeNew' && which(file), code);
  }

  heal(): void {
    this.faults = [];
  }

  /** How many files matching `which` were written (temp file created) so far. */
  writes(which: (file: string) => boolean = () => true): number {
    return this.calls.filter(({ op, file }) => op === 'writeNew' && which(file)).length;
  }

  async writeNew(file: string, text: string): Promise<void> {
    this.check('writeNew', file);
    await nodeFileSystem.writeNew(file, text);
  }

  async rename(from: string, to: string): Promise<void> {
    this.check('rename', to);
    await nodeFileSystem.rename(from, to);
  }

  async unlink(file: string): Promise<void> {
    this.check('unlink', file);
    await nodeFileSystem.unlink(file);
  }

  async syncDir(dir: string): Promise<void> {
    this.check('syncDir', dir);
    await nodeFileSystem.syncDir(dir);
  }

  private check(op: FileOp, file: string): void {
    const target = targetOf(file);
    this.calls.push({ op, file: target });
    const fault = this.faults.find(({ match }) => match(op, target));
    if (fault) throw errno(fault.code, op, file);
  }
}

/** An error as node:fs throws it: `ENOSPC: no space left on device, open '/x'`, with code and path. */
export function errno(code: string, op: string, file: string): NodeJS.ErrnoException {
  const words: Record<string, string> = {
    ENOSPC: 'no space left on device',
    EROFS: 'read-only file system',
    EIO: 'i/o error',
  };
  const error: NodeJS.ErrnoException = new Error(`${code}: ${words[code] ?? 'failed'}, ${op} '${file}'`);
  error.code = code;
  error.path = file;
  return error;
}

/** `.tokens.json.0a1b2c3d4e5f.tmp` is written for `tokens.json`. */
function targetOf(file: string): string {
  const name = path.basename(file);
  const temp = /^\.(.+)\.[0-9a-f]{12}\.tmp$/.exec(name);
  return temp ? path.join(path.dirname(file), temp[1]!) : file;
}
