import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * `mkdir -p`, one level at a time: Node's `mkdir(dir, { recursive: true })` never settles (and keeps
 * a core busy) where a parent refuses every new entry with ENOENT, as /proc and /sys do. The nearest
 * folder that exists is found first; each missing level below it is made on its own (one made
 * meanwhile by another process is fine), and the first refusal is the error, with its code.
 */
export async function makeDirectory(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    const found = await stat(at).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (found) {
      if (!found.isDirectory()) throw Object.assign(new Error(`${at} is not a folder`), { code: 'ENOTDIR', path: at });
      break;
    }
    missing.push(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const level of missing.reverse()) {
    await mkdir(level, mode === undefined ? {} : { mode }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
