// How the bench scripts start `svc serve`: this checkout's CLI, a free port, JSON log lines and
// keys of their own, so that each script can call the emulator it started.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SVC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'svc.js');
export const MANAGEMENT_KEY = 'bench-management-key-0001';
export const PRIVATE_KEY = 'bench-private-key-00000001';

/** The arguments of `node` that run `svc serve` so, with `extra` after them (`--in-memory`...). */
export function serveArgs(extra = []) {
  return [
    SVC,
    'serve',
    '--port',
    '0',
    '--log-format',
    'json',
    '--management-key',
    MANAGEMENT_KEY,
    '--private-key',
    PRIVATE_KEY,
    ...extra,
  ];
}
