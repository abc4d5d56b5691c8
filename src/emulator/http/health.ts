import { packageVersion } from '../../lib/package-version.js';

let healthy: string | undefined;

/** `GET /health`'s status and JSON body. */
export interface HealthAnswer {
  status: 200 | 503;
  body: string;
}

/**
 * `GET /health`: 200 `{"status":"ok","version":…}` while the store can write; 503
 * `{"status":"unavailable","version":…,"store":{"writable":false,"detail":…}}` while it cannot (a
 * full or read-only disk, a data file it may not replace), so that a monitor notices before a
 * client's write is refused. `storeProblem` is the store's own words: the file, the cause, the fix.
 */
export function healthAnswer(storeProblem: string | undefined): HealthAnswer {
  if (storeProblem === undefined) {
    healthy ??= JSON.stringify({ status: 'ok', version: packageVersion() });
    return { status: 200, body: healthy };
  }
  const store = { writable: false, detail: storeProblem };
  return { status: 503, body: JSON.stringify({ status: 'unavailable', version: packageVersion(), store }) };
}
