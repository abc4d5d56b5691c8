import path from 'node:path';
import { ApiError } from '../../client/errors.js';

/**
 * A code file a command sent, and how to tell it in the server's words: the server names code after
 * its resource (`charge.js` for reactor charge, `stripe-request-transform.js`), not after the local file.
 */
export interface SentCode {
  /** The path as the user gave it (`reactors/charge.js`). */
  file: string;
  /** Whether the server's file name is this one (a proxy sends two). */
  matches(serverFile: string): boolean;
}

/**
 * Runs `call`; when the server refuses the code as not loading (422), the file its problem names is
 * replaced by the local path, so that `reactors/charge.js:4:12` is what the user reads (and clicks).
 */
export async function withCodePaths<T>(sent: (SentCode | undefined)[], call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw localized(
      error,
      sent.filter((code): code is SentCode => code !== undefined),
    );
  }
}

function localized(error: unknown, sent: SentCode[]): unknown {
  if (!(error instanceof ApiError) || error.status !== 422 || sent.length === 0) return error;
  const detail = error.problem.detail ?? '';
  const told: unknown = error.problem.location?.file;
  const serverFile = typeof told === 'string' ? told : remoteServerFile(detail);
  // The detail opens with the server's file name: replaced there, the rest kept as the server said it.
  if (serverFile === undefined || !detail.startsWith(serverFile)) return error;
  const local = sent.find((code) => code.matches(serverFile));
  if (local === undefined) return error;
  // `location` stays the server's: the detail is what the user reads.
  return new ApiError(error.status, {
    ...error.problem,
    detail: `${path.normalize(local.file)}${detail.slice(serverFile.length)}`,
  });
}

/**
 * A server that sends no `location` (a remote platform): the file name its load problem's detail
 * opens with (`charge.js:4:12: ...`, `charge.js must export ...`). The emulator's problems carry
 * `location`, so this reading of prose serves only such servers.
 */
function remoteServerFile(detail: string): string | undefined {
  return /^([^\s:]+\.js)(?=[:\s])/.exec(detail)?.[1];
}

/** A reactor's code: the one file sent. */
export function sentReactor(file: string | undefined): SentCode | undefined {
  return file === undefined ? undefined : { file, matches: () => true };
}

/** A proxy's transform, told apart from the other one by the server's name for it. */
export function sentTransform(file: string | false | undefined, kind: 'request' | 'response'): SentCode | undefined {
  if (typeof file !== 'string') return undefined;
  return { file, matches: (serverFile) => serverFile.endsWith(`-${kind}-transform.js`) };
}
