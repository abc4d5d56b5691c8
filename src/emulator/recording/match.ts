/**
 * What a replayed request is matched by: method, path, query and body, redacted as a recording is
 * (so today's plaintext reads as the cassette's `{{ token }}`), with each expression numbered in the
 * order it first appears: a recording made with other token ids than today's still matches. The
 * query's parameters match in any order (a name's values in theirs), a JSON body by its value (any
 * spacing, its members in any order); any other body as it is.
 */
import type { RecordedRequest } from './cassette.js';
import { canonicalJson } from '../../lib/canonical-json.js';

const EXPRESSION = /\{\{\s*([^{}\s]+(?:\s+[^{}\s]+)*)\s*\}\}/g;

/** `text` with each `{{ id }}` as `{{ #n }}`, n counted over `seen` (shared by a request's parts). */
export function numberExpressions(text: string, seen: Map<string, number>): string {
  if (!text.includes('{{')) return text;
  return text.replace(EXPRESSION, (_whole, id: string) => {
    let n = seen.get(id);
    if (n === undefined) seen.set(id, (n = seen.size + 1));
    return `{{ #${n} }}`;
  });
}

/** The key a (redacted) request is matched by. */
export function matchKey(request: RecordedRequest): string {
  const seen = new Map<string, number>();
  // In the order they are sent: path, query, body.
  const path = numberExpressions(request.path, seen);
  const query = numberExpressions(sortedQuery(request.query), seen);
  const body =
    request.body !== undefined
      ? `text:${numberExpressions(canonicalBody(request.body) ?? request.body, seen)}`
      : request.bodyBase64 !== undefined
        ? `base64:${request.bodyBase64}`
        : request.bodyOmitted !== undefined
          ? `omitted:${request.bodyOmitted}`
          : '';
  return [request.method, path, query, body].join('\n');
}

/** The query's parameters sorted by name (stable: a name's values keep their order). */
function sortedQuery(query: string): string {
  if (!query.includes('&')) return query;
  const name = (pair: string) => pair.split('=', 1)[0] as string;
  return query
    .split('&')
    .sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0))
    .join('&');
}

/** A JSON text written one way (no spacing, members sorted by name), or undefined when it is not JSON. */
function canonicalBody(text: string): string | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return canonicalJson(JSON.parse(text));
  } catch {
    // Not JSON, or nested deeper than the stack lets it be written again: matched as text.
    return undefined;
  }
}
