import { createHash } from 'node:crypto';

/** A version that changes exactly when the code (or the file name its stack traces show) does. */
export function codeVersion(code: string, filename: string): string {
  return createHash('sha256').update(filename).update('\u0000').update(code).digest('hex').slice(0, 16);
}

const recordVersions = new WeakMap<object, Map<string, string>>();

/**
 * codeVersion of code a stored record holds, hashed once per record object and file name rather
 * than on every call: records are replaced on every change, never edited in place.
 */
export function recordCodeVersion(record: object, code: string, filename: string): string {
  let byFile = recordVersions.get(record);
  if (!byFile) recordVersions.set(record, (byFile = new Map()));
  let version = byFile.get(filename);
  if (version === undefined) byFile.set(filename, (version = codeVersion(code, filename)));
  return version;
}
