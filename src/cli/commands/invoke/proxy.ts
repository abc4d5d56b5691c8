import { JSON_CONTENT_TYPE, PROXY_DESTINATION_STATUS_HEADER, PROXY_KEY_HEADER } from '../../../api/headers.js';
import { problemFromAnswer } from '../../../api/problem.js';
import { ApiError } from '../../../client/errors.js';
import { UsageError, UserError } from '../../io/errors.js';
import { readInput } from '../../io/input.js';
import { defineCommand } from '../../registry.js';
import { resolveProxyId } from '../../../requests/lookup.js';
import { safeLines } from '../../../lib/terminal-text.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** What a proxy key looks like (`proxy_<env>_<26 base58>`); anything else is an id or a name. */
const PROXY_KEY = /^proxy_[a-z]+_[1-9A-HJ-NP-Za-km-z]{26}$/;

/** curl's exit code for `--fail` on an HTTP error, which scripts already test for. */
const FAIL_EXIT_CODE = 22;

/** The destination answered 4xx or 5xx, and `--fail` asked for that to be an error. */
class DestinationFailed extends UserError {
  override readonly exitCode = FAIL_EXIT_CODE;
}

/** `-H 'Name: value'` into a header pair. */
function parseHeader(line: string): [string, string] {
  const at = line.indexOf(':');
  if (at <= 0) throw new UsageError(`-H takes 'Name: value', not "${line}".`);
  return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
}

export const proxy = defineCommand({
  name: 'proxy',
  description: "call a proxy like curl: prints the destination's body (and status and headers with -i)",
  args: [{ name: 'proxy', description: 'proxy key, id or exact name' }],
  options: [
    { flags: '-X, --request <method>', description: 'GET, POST, PUT, PATCH or DELETE (default GET, or POST with -d)' },
    { flags: '--path <path>', description: 'path after /proxy, with an optional ?query (e.g. /v1/charges?expand=x)' },
    { flags: '-H, --header <header>', description: "a request header 'Name: value' (repeatable)", repeatable: true },
    { flags: '-d, --data <data>', description: 'the body: text, @file or - (stdin); JSON is sent as application/json' },
    { flags: '--no-auth', description: 'send no API key (for proxies that accept anonymous callers)' },
    { flags: '-i, --include', description: 'print the status line and headers before the body' },
    {
      flags: '-f, --fail',
      description: `exit ${FAIL_EXIT_CODE} (as curl does), printing no body, when the destination answers 4xx or 5xx`,
    },
  ],
  examples: [
    `svc invoke proxy stripe -X POST --path /v1/charges -d '{"card":"{{ 5f0e... }}"}' -i`,
    'svc invoke proxy stripe --path /v1/charges/ch_1 --fail --json | jq .body',
  ],
  async handler({ args, options }, ctx) {
    const method = (options.request ?? (options.data !== undefined ? 'POST' : 'GET')).toUpperCase();
    if (!METHODS.includes(method)) throw new UsageError(`-X must be one of ${METHODS.join(', ')}, not ${method}.`);
    const path = options.path ?? '';
    if (path !== '' && !path.startsWith('/')) throw new UsageError('--path must start with "/".');
    const headers: Record<string, string> = {};
    for (const line of options.header ?? []) {
      const [name, value] = parseHeader(line);
      headers[name] = value;
    }
    const body = options.data === undefined ? undefined : await readInput(options.data, ctx.io, '--data');
    if (body !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = parseMaybeJson(body) !== body ? JSON_CONTENT_TYPE : 'text/plain';
    }

    const client = await ctx.client();
    const key = PROXY_KEY.test(args.proxy)
      ? args.proxy
      : (await client.proxies.get(await resolveProxyId(client, args.proxy))).key;
    headers[PROXY_KEY_HEADER] = key;
    const response = await client.raw(method, `/proxy${path}`, { headers, body, key: options.auth ? 'api' : 'none' });

    const destinationStatus = response.headers[PROXY_DESTINATION_STATUS_HEADER];
    if (destinationStatus === undefined) {
      // No destination status: the proxy itself refused or failed (spec 4.3).
      // Its problem is in `proxy_error`, or (a route the proxy never reached) the body itself.
      const answer = parseMaybeJson(response.text) as { proxy_error?: unknown } | undefined;
      const problem = answer?.proxy_error ?? answer;
      throw new ApiError(response.status, problemFromAnswer(response.status, problem, response.text));
    }
    const statusLine = `${response.status} ${response.statusText}`.trim();
    if (options.fail && response.status >= 400) {
      throw new DestinationFailed(`The destination answered ${statusLine} (--fail).`);
    }
    const result = { status: response.status, headers: response.headers, body: parseMaybeJson(response.text) };
    await ctx.output.result(result, () => {
      if (options.include) {
        ctx.output.line(`HTTP/${response.httpVersion} ${statusLine}`);
        for (const [name, value] of Object.entries(response.headers))
          ctx.output.line(`${name}: ${Array.isArray(value) ? value.join(', ') : value}`);
        ctx.output.line();
      } else {
        ctx.output.note(`Destination answered ${statusLine}.`);
      }
      // The destination's body as it came into a pipe or a file (as curl writes it); on a terminal, safe for it.
      const text = ctx.io.stdout.isTTY === true ? safeLines(response.text) : response.text;
      ctx.io.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    });
  },
});

/** The JSON value of `text`, or `text` itself when it is not JSON. */
function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
