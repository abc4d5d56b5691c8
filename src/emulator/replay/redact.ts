/**
 * What `svc replay` keeps is redacted as a recording is (recording/redact.ts): each value the call
 * detokenized becomes its `{{ token_id }}` expression (by provenance: the call's own set of
 * secrets), Luhn-valid numbers no token explains become `[card ****4242]`, and credentials are not
 * kept at all: authorization headers, cookies, keys (headers and query parameters so named).
 */
import { type RedactionSources, redactForRecording } from '../recording/redact.js';
import { exceedsDepth, MAX_DEPTH } from '../../lib/json-depth.js';

/** How much of each body is kept (and compared). */
export const KEPT_BODY_BYTES = 64 * 1024;

/** Headers and query parameters whose value is a credential: dropped, never kept. */
const CREDENTIAL = /authorization|cookie|(^|[-_])(api[-_]?)?key($|[-_])|token|secret|password|signature|session/i;

export function isCredentialName(name: string): boolean {
  return CREDENTIAL.test(name);
}

/** Redacts the texts of one call, against the secrets it revealed (none yet: cards are still masked). */
export class CallRedactor {
  constructor(readonly sources: RedactionSources = {}) {}

  text(text: string): string {
    return redactForRecording(text, this.sources);
  }

  /** Every string of a JSON value redacted (keys too). */
  value(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number') {
      const text = this.text(String(value));
      return text === String(value) ? value : text;
    }
    if (Array.isArray(value)) return value.map((item) => this.value(item));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[this.text(key)] = this.value(item);
      return out;
    }
    return value;
  }

  /** Headers without credentials, the rest redacted; names lower-cased, sorted (a stable diff). */
  headers(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of Object.keys(headers).sort()) {
      const value = headers[name];
      if (value === undefined || isCredentialName(name)) continue;
      out[name.toLowerCase()] = this.text(Array.isArray(value) ? value.join(', ') : value);
    }
    return out;
  }

  /** A query (`?a=1&b=2` or ''): credential parameters' values dropped, the rest redacted. */
  query(query: string): string {
    if (query === '' || query === '?') return query;
    const parts = query
      .slice(1)
      .split('&')
      .map((part) => {
        const at = part.indexOf('=');
        const name = at < 0 ? part : part.slice(0, at);
        let decoded = name;
        try {
          decoded = decodeURIComponent(name);
        } catch {}
        return isCredentialName(decoded) ? `${name}=[dropped]` : this.text(part);
      });
    return `?${parts.join('&')}`;
  }

  /** A URL: its query as `query` keeps it, the rest redacted. */
  url(url: string): string {
    const at = url.indexOf('?');
    return at < 0 ? this.text(url) : this.text(url.slice(0, at)) + this.query(url.slice(at));
  }

  /** A body as kept: its first 64 KB redacted, shown as JSON when it parses as JSON. */
  body(body: Buffer | string | undefined, truncated = false): { body: unknown; text: string; truncated?: true } {
    if (body === undefined) return { body: null, text: '' };
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const cut = truncated || bytes.length > KEPT_BODY_BYTES;
    const text = this.text(bytes.subarray(0, KEPT_BODY_BYTES).toString('utf8'));
    return { body: shown(text), text, ...(cut && { truncated: true as const }) };
  }
}

/**
 * A body's text as a diff shows it: parsed when it is JSON (redaction keeps JSON strings JSON), and
 * nests no deeper than MAX_DEPTH (a deeper one would overflow the stack of the compare and the diff).
 */
export function shown(text: string): unknown {
  if (text === '') return null;
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      const value: unknown = JSON.parse(text);
      if (!exceedsDepth(value, MAX_DEPTH)) return value;
    } catch {}
  }
  return text;
}
