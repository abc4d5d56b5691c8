/** How a target is named to the user: its URL and where it came from, and whether it is this machine. */
import path from 'node:path';
import { safeText } from '../../lib/terminal-text.js';
import type { Target } from './resolve.js';

/**
 * `--base-url`, `SVC_BASE_URL`, `profile "staging"`, `this folder's svc serve`, or the default local
 * emulator when nothing named one: what the line before a change says the target came from.
 */
export function targetSource(target: Target, cwd: string): string {
  switch (target.source) {
    case 'flag':
      return '--base-url';
    case 'env':
      return 'SVC_BASE_URL';
    case 'profile':
      return `profile "${target.profile}"`;
    case 'local': {
      if (target.credentialsFile !== undefined) {
        const project = path.dirname(path.dirname(target.credentialsFile));
        const where = path.relative(cwd, project);
        return where === '' ? "this folder's svc serve" : `the svc serve of ${where}`;
      }
      const keys = target.profile === undefined ? '' : `, keys of profile "${target.profile}"`;
      return `the default local emulator${keys}`;
    }
  }
}

/** `target http://127.0.0.1:4010 (this folder's svc serve)`, made safe for a terminal. */
export function targetLine(target: Target, cwd: string): string {
  return `target ${safeText(target.baseUrl)} (${safeText(targetSource(target, cwd))})`;
}

/** Whether the base URL names this machine: 127.0.0.0/8, ::1 or localhost (changes there are never asked about). */
export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
