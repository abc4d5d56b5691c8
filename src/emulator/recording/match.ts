/**
 * What a replayed request is matched by: method, path, query and body, redacted as a recording is
 * (so today's plaintext reads as the cassette's `{{ token }}`), with each expression numbered in the
 * order it first appears: a recording made with other token ids than today's still matches.
 */
import type { RecordedRequest } from './cassette.js';

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
  const query = numberExpressions(request.query, seen);
  const body =
    request.body !== undefined
      ? `text:${numberExpressions(request.body, seen)}`
      : request.bodyBase64 !== undefined
        ? `base64:${request.bodyBase64}`
        : request.bodyOmitted !== undefined
          ? `omitted:${request.bodyOmitted}`
          : '';
  return [request.method, path, query, body].join('\n');
}
