import { packageVersion } from '../../lib/package-version.js';

let answer: string | undefined;

/** The body of `GET /health`, as both the lean route and fastify's send it: `{"status":"ok","version":…}`. */
export function healthBody(): string {
  answer ??= JSON.stringify({ status: 'ok', version: packageVersion() });
  return answer;
}
