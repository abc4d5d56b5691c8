/**
 * What a recording keeps of an exchange, by provenance: every value the call detokenized (and its
 * derived forms) becomes its `{{ token_id }}` expression, the code's configuration values become
 * `[configuration]`, credentials headers (authorization, cookies) are masked whole, and Luhn-valid
 * numbers no token explains become `[card ****4242]`. Pure: the recorder, the replayer's match and
 * `svc replay`'s store all redact with it. `findPlaintext` is the check a written cassette gets.
 */
import { CallSecrets, type LeakForm, maskCards, scanCards } from '../leaks/secrets.js';
import type { RecordedBody, RecordedExchange, RecordedHeaders } from './cassette.js';

/** What an exchange is redacted against. */
export interface RedactionSources {
  /** The call's detokenized values (OutboundOrigin.secrets). */
  secrets?: CallSecrets | undefined;
  /** The code's configuration values (OutboundOrigin.configuration). */
  configuration?: readonly string[] | undefined;
  /** Declared test card numbers: left as they are. */
  allowCards?: ReadonlySet<string> | undefined;
}

/** Headers whose whole value is a credential: never written. */
export const MASKED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
]);
export const MASK = '[masked]';
export const CONFIGURATION_MASK = '[configuration]';
/** The token id configuration values are found under (never a real token's: ids have no spaces). */
const CONFIGURATION_ID = 'svc configuration';
const CONFIGURATION_EXPRESSION = `{{ ${CONFIGURATION_ID} }}`;

/** A configuration's values as a set of secrets (their derived forms found too), made once per list. */
const configurationSets = new WeakMap<readonly string[], CallSecrets>();

function configurationSecrets(values: readonly string[]): CallSecrets {
  let set = configurationSets.get(values);
  if (!set) {
    set = new CallSecrets();
    addConfiguration(set, values);
    configurationSets.set(values, set);
  }
  return set;
}

/** Adds configuration values to a set of secrets (a run-wide one): findPlaintext names them `configuration`. */
export function addConfiguration(set: CallSecrets, values: readonly string[]): void {
  for (const value of values) set.add(value, CONFIGURATION_ID);
}

/** `text` as a recording keeps it: detokenized values as expressions, configuration and card numbers masked. */
export function redactForRecording(text: string, sources: RedactionSources): string {
  let out = text;
  if (sources.secrets && sources.secrets.size > 0) out = sources.secrets.redact(out);
  if (sources.configuration && sources.configuration.length > 0) {
    const configuration = configurationSecrets(sources.configuration);
    if (configuration.size > 0)
      out = configuration.redact(out).split(CONFIGURATION_EXPRESSION).join(CONFIGURATION_MASK);
  }
  return maskCards(out, sources.allowCards);
}

/** Headers as a recording keeps them: credentials masked whole, every other value redacted. */
export function redactHeaders(headers: RecordedHeaders, sources: RedactionSources): RecordedHeaders {
  const out: RecordedHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (MASKED_HEADERS.has(name)) out[name] = Array.isArray(value) ? value.map(() => MASK) : MASK;
    else
      out[name] = Array.isArray(value)
        ? value.map((item) => redactForRecording(item, sources))
        : redactForRecording(value, sources);
  }
  return out;
}

/** A body as a recording keeps it; bytes that are not text and hold a secret are omitted, with the reason. */
export function redactBody<T extends RecordedBody>(message: T, sources: RedactionSources): T {
  if (message.body !== undefined) return { ...message, body: redactForRecording(message.body, sources) };
  if (message.bodyBase64 === undefined) return message;
  const bytes = Buffer.from(message.bodyBase64, 'base64').toString('latin1');
  if (findPlaintext(bytes, sources).length === 0) return message;
  const { bodyBase64: _dropped, ...rest } = message;
  return { ...rest, bodyOmitted: 'binary body holding a detokenized value, configuration or card number' } as T;
}

/** An exchange as a recording keeps it (request path, query, headers and body; the answer's headers and body). */
export function redactExchange(exchange: RecordedExchange, sources: RedactionSources): RecordedExchange {
  const { request, answer } = exchange;
  return {
    request: redactBody(
      {
        ...request,
        path: redactForRecording(request.path, sources),
        query: redactForRecording(request.query, sources),
        headers: redactHeaders(request.headers, sources),
      },
      sources,
    ),
    answer: redactBody({ ...answer, headers: redactHeaders(answer.headers, sources) }, sources),
  };
}

/** Plaintext found where none may be: a secret's token id and form, or a card's last four digits. */
export interface PlaintextFinding {
  /** The token id, 'configuration', or undefined for a card number no token explains. */
  tokenId: string | undefined;
  form: LeakForm | 'card';
  last4?: string;
}

/** What of `sources` remains in `text` (never the values themselves). */
export function findPlaintext(text: string, sources: RedactionSources): PlaintextFinding[] {
  const found: PlaintextFinding[] = [];
  for (const hit of sources.secrets?.find(text) ?? [])
    found.push({ tokenId: hit.tokenId === CONFIGURATION_ID ? 'configuration' : hit.tokenId, form: hit.form });
  if (sources.configuration && sources.configuration.length > 0)
    for (const hit of configurationSecrets(sources.configuration).find(text))
      found.push({ tokenId: 'configuration', form: hit.form });
  for (const card of scanCards(text, sources.allowCards))
    found.push({ tokenId: undefined, form: 'card', last4: card.last4 });
  return found;
}
