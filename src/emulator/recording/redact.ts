/**
 * What a recording keeps of an exchange, by provenance: every value the call detokenized (and its
 * derived forms) becomes its `{{ token_id }}` expression, the code's configuration values become
 * `[configuration]`, credentials (authorization, cookies, headers and query or form parameters named
 * as keys, tokens, secrets, signatures, passwords, sessions) are masked whole, and Luhn-valid
 * numbers no token explains become `[card ****4242]`. Pure: the recorder, the replayer's match and
 * `svc replay`'s store all redact with it. `findPlaintext` is the check a written cassette gets.
 */
import type { LeakEventForm } from '../../api/events.js';
import { CallSecrets, maskCards, scanCards } from '../leaks/secrets.js';
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
/** Other headers named as credentials are (a key written in the code, an idempotency key new every run). */
const CREDENTIAL_HEADER = /key|token|secret|auth|signature|session|passw|credential|cookie/;
/** Query and form parameters named as a credential (`api_key`, `accessToken`, `client_secret`): values masked. */
const CREDENTIAL_PARAMETER =
  /(^|[^a-z0-9])(api[_-]?key|key|((access|refresh|id|auth|bearer)[_-]?)?token|(client[_-]?)?secret|passw(or)?d|pwd|sig(nature)?|auth(orization)?|session([_-]?id)?|credentials?|cvc2?|cvv2?|csc|security[_-]?code|card[_-]?code)$/;
/**
 * A JSON member holding a card's security code: too short to be looked for as a token's value (3-4
 * digits would be found in every number), so masked by its name wherever it stands.
 */
const SECURITY_CODE_MEMBER =
  /("(?:cvc2?|cvv2?|csc|security[_-]?code|card[_-]?code)"\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d+)/gi;
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
    if (MASKED_HEADERS.has(name) || CREDENTIAL_HEADER.test(name))
      out[name] = Array.isArray(value) ? value.map(() => MASK) : MASK;
    else
      out[name] = Array.isArray(value)
        ? value.map((item) => redactForRecording(item, sources))
        : redactForRecording(value, sources);
  }
  return out;
}

/** A body as a recording keeps it; bytes that are not text and hold a secret are omitted, with the reason. */
export function redactBody<T extends RecordedBody & { headers?: RecordedHeaders }>(
  message: T,
  sources: RedactionSources,
): T {
  if (message.body !== undefined) {
    const body = redactForRecording(message.body, sources);
    const type = message.headers?.['content-type'];
    const form = typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded');
    if (form) return { ...message, body: redactQuery(body, sources) };
    // Escapes another encoder chose still hiding a value: written as their characters, and redacted.
    const unescaped = unescapedJson(body);
    const hidden = unescaped !== body && findPlaintext(unescaped, sources).length > 0;
    const redacted = hidden ? redactForRecording(unescaped, sources) : body;
    return { ...message, body: redacted.replace(SECURITY_CODE_MEMBER, `$1"${MASK}"`) };
  }
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
        path: request.path
          .split('/')
          .map((segment) => redactComponent(segment, sources, false))
          .join('/'),
        query: redactQuery(request.query, sources),
        headers: redactHeaders(request.headers, sources),
      },
      sources,
    ),
    answer: redactBody({ ...answer, headers: redactHeaders(answer.headers, sources) }, sources),
  };
}

/**
 * A query (or a form body) redacted name by name and value by value, each also as it decodes; the
 * value of a parameter named as a credential is masked whole.
 */
function redactQuery(query: string, sources: RedactionSources): string {
  return query
    .split('&')
    .map((pair) => {
      const [name = '', ...values] = pair.split('=');
      if (values.length > 0 && CREDENTIAL_PARAMETER.test((percentDecoded(name, true) ?? name).toLowerCase()))
        return `${name}=${MASK}`;
      return [name, ...values].map((part) => redactComponent(part, sources, true)).join('=');
    })
    .join('&');
}

/**
 * A percent-encoded component redacted as it is, and, when its decoding (another encoder's choice
 * of characters: `'`, `@`, `+` for a space) still shows plaintext, redacted decoded and encoded again.
 */
function redactComponent(text: string, sources: RedactionSources, plus: boolean): string {
  const redacted = redactForRecording(text, sources);
  const decoded = percentDecoded(redacted, plus);
  if (decoded === undefined || findPlaintext(decoded, sources).length === 0) return redacted;
  return redactForRecording(decoded, sources)
    .split(/(\{\{[^{}]*\}\})/)
    .map((piece, at) => (at % 2 === 1 ? piece : encodeURIComponent(piece)))
    .join('');
}

/** `text` percent-decoded (`+` as a space in a query), or undefined when it has no encoding or a broken one. */
function percentDecoded(text: string, plus: boolean): string | undefined {
  if (!text.includes('%') && !(plus && text.includes('+'))) return undefined;
  try {
    return decodeURIComponent(plus ? text.replaceAll('+', ' ') : text);
  } catch {
    return undefined;
  }
}

/**
 * `text` with the JSON escapes another encoder may choose (`\u00e9`, `\u0027`, `\/`) written as
 * their characters, those JSON must escape (quotes, backslashes, control characters) left as
 * they are: the same JSON, in which a value stands as JSON.stringify would write it. Found by one
 * scan, whatever the nesting.
 */
export function unescapedJson(text: string): string {
  if (!text.includes('\\')) return text;
  return text.replace(/\\\\|\\u([0-9a-fA-F]{4})|\\\//g, (whole, hex: string | undefined) => {
    if (whole === '\\/') return '/';
    if (hex === undefined) return whole;
    const code = Number.parseInt(hex, 16);
    return code < 0x20 || code === 0x22 || code === 0x5c ? whole : String.fromCharCode(code);
  });
}

/**
 * Every way the texts of a written cassette may still hold plaintext once decoded (the recorder's
 * check after the file's own text): each part percent-decoded, each JSON body's strings unescaped,
 * each base64 body's bytes.
 */
export function decodedViews(exchanges: readonly RecordedExchange[]): string[] {
  const views: string[] = [];
  for (const { request, answer } of exchanges) {
    for (const text of [request.path, request.query, request.body, answer.body]) {
      if (text === undefined) continue;
      for (const plus of [false, true]) {
        const decoded = percentDecoded(text, plus);
        if (decoded !== undefined) views.push(decoded);
      }
      const unescaped = unescapedJson(text);
      if (unescaped !== text) views.push(unescaped);
    }
    for (const base64 of [request.bodyBase64, answer.bodyBase64])
      if (base64 !== undefined) views.push(Buffer.from(base64, 'base64').toString('latin1'));
  }
  return views;
}

/** Plaintext found where none may be: a secret's token id and form, or a card's last four digits. */
export interface PlaintextFinding {
  /** The token id, 'configuration', or undefined for a card number no token explains. */
  tokenId: string | undefined;
  form: LeakEventForm;
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
