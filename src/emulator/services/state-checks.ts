/**
 * What an imported state document must hold before anything is written: what a create would have
 * refused is refused here too (an import is no way around the API's checks), and what two entries
 * of one file cannot share (an id, a key) is refused. Each problem is one line naming its entry.
 */
import type { StateDocument, StateToken } from '../../api/state.js';
import { STATE_KINDS } from '../../api/state.js';
import { MAX_NAME_LENGTH } from '../../api/limits.js';
import { HTTP_URL_PATTERN, TOKEN_ID_PATTERN, TOKEN_ID_RULE } from '../../api/patterns.js';
import { FieldErrors, HttpError } from '../errors.js';
import { CONTAINER_PATTERN } from './access.js';
import { inSlices } from './state-import.js';
import { normalizeTokenData } from './token-types.js';

const TOKEN_ID = new RegExp(TOKEN_ID_PATTERN);
const HTTP_URL = new RegExp(HTTP_URL_PATTERN);
/** A card's expiry is checked against this: a card that expired after its export is still a token. */
const LONG_AGO = new Date(0);

/** Rejects with a 422 (`badFile`) for the first entry of `doc` that cannot be imported; tokens checked a slice at a time. */
export async function checkEntries(doc: StateDocument, badFile: (detail: string) => HttpError): Promise<void> {
  for (const kind of STATE_KINDS) {
    const seen = new Set<string>();
    for (const entry of doc[kind]) {
      if (seen.has(entry.id)) throw badFile(`${kind} holds id ${entry.id} twice`);
      seen.add(entry.id);
    }
  }
  const problem = firstProblem(doc);
  if (problem) throw badFile(problem);
  await inSlices(doc.tokens, (token) => {
    const bad = badToken(token);
    if (bad) throw badFile(`token ${token.id}: ${bad}`);
  });
}

function firstProblem(doc: StateDocument): string | undefined {
  const keys = new Map<string, string>();
  for (const app of doc.applications) {
    const what = `Application ${app.name}`;
    const bad = badName(app.name) ?? sharedKey(keys, app.key_hash, what);
    if (bad) return `${what}: ${bad}`;
  }
  for (const reactor of doc.reactors) {
    const bad = badName(reactor.name) ?? (reactor.code === '' ? 'code is empty' : undefined);
    if (bad) return `reactor ${reactor.name}: ${bad}`;
  }
  const proxyKeys = new Map<string, string>();
  for (const proxy of doc.proxies) {
    const what = `proxy ${proxy.name}`;
    const bad =
      badName(proxy.name) ??
      badUrl(proxy.destination_url) ??
      (proxy.key === '' ? 'key is empty' : sharedKey(proxyKeys, proxy.key, what));
    if (bad) return `${what}: ${bad}`;
  }
  return undefined;
}

function badName(name: string): string | undefined {
  if (name.length === 0) return 'name is empty';
  if (name.length > MAX_NAME_LENGTH) return `name is longer than ${MAX_NAME_LENGTH} characters`;
  return undefined;
}

function sharedKey(seen: Map<string, string>, key: string, what: string): string | undefined {
  const other = seen.get(key);
  seen.set(key, what);
  return other === undefined ? undefined : `has the same key as ${other}`;
}

function badUrl(url: string): string | undefined {
  const problem = 'destination_url must be an http or https URL of at most 2000 characters';
  if (url.length > 2000 || !HTTP_URL.test(url) || !URL.canParse(url)) return problem;
  return new URL(url).hostname === '' ? problem : undefined;
}

function badToken(token: StateToken): string | undefined {
  if (!TOKEN_ID.test(token.id)) return `id ${TOKEN_ID_RULE}`;
  if (token.containers.length === 0 || token.containers.length > 10) return 'containers must hold 1 to 10 containers';
  const container = token.containers.findIndex((name) => !CONTAINER_PATTERN.test(name));
  if (container >= 0)
    return `containers[${container}] must start and end with "/" and hold only lower-case letters, digits, "-" and "_" between slashes`;
  const metadata = Object.values(token.metadata);
  if (metadata.length > 50 || metadata.some((value) => value.length > 1000))
    return 'metadata must hold at most 50 values of at most 1000 characters';
  const errors = new FieldErrors();
  normalizeTokenData(token.type, token.type === 'card' ? numericDates(token.data) : token.data, errors, LONG_AGO);
  try {
    errors.throwIfAny();
  } catch (error) {
    if (error instanceof HttpError) return error.detail.replace(/^Invalid request: /, '').replace(/\.$/, '');
    throw error;
  }
  return undefined;
}

/** A card's month and year as numbers: a file written by hand or by an earlier svc may hold digit strings. */
function numericDates(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data;
  const card = { ...(data as Record<string, unknown>) };
  for (const field of ['expiration_month', 'expiration_year']) {
    const value = card[field];
    if (typeof value === 'string' && /^\d{1,4}$/.test(value)) card[field] = Number(value);
  }
  return card;
}
