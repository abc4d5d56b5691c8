import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { parse as secureJsonParse } from 'secure-json-parse';
import { JSON_CONTENT_TYPE, MERGE_PATCH_CONTENT_TYPE } from '../../api/headers.js';
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { MAX_JSON_KEYS, exceedsKeys } from '../../lib/json-keys.js';
import { HttpError } from '../errors.js';

/** Fatal: a byte sequence that is not UTF-8 is refused rather than turned into U+FFFD (data changed silently). */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const UTF8_CHARSETS = new Set(['utf-8', 'utf8']);

/** The media type (lower-cased, without parameters) and charset of a Content-Type header. */
export function parseContentType(header: string | undefined): { type: string; charset: string | undefined } {
  const [type = '', ...parameters] = (header ?? '').split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const at = parameter.indexOf('=');
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

type Done = (error: Error | null, body?: unknown) => void;
/** A JSON body's bytes to its value, for a request with these headers. */
export type JsonBody = (request: { headers: IncomingHttpHeaders }, raw: Buffer, done: Done) => void;

/** fastify's errors for a JSON body it cannot parse (same codes and words), which problems.ts words for the caller. */
function parseError(code: 'FST_ERR_CTP_EMPTY_JSON_BODY' | 'FST_ERR_CTP_INVALID_JSON_BODY'): Error {
  const message =
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
      ? "Body cannot be empty when content-type is set to 'application/json'"
      : "Body is not valid JSON but content-type is set to 'application/json'";
  return Object.assign(new Error(message), { code, statusCode: 400 });
}

function unsuspect(text: string): boolean {
  return (
    text.charCodeAt(0) !== 0xfeff &&
    !text.includes('\\') &&
    !text.includes('__proto__') &&
    !text.includes('constructor')
  );
}

/**
 * fastify's default JSON parser (secure-json-parse refusing `__proto__` and `constructor.prototype`),
 * here so that both HTTP paths use it without the lean one loading fastify.
 */
function parseJson(text: string, done: Done): void {
  if (text.length === 0) {
    done(parseError('FST_ERR_CTP_EMPTY_JSON_BODY'));
    return;
  }
  let value: unknown;
  try {
    // Without a backslash (an escape could spell either key), `__proto__` or `constructor`, the
    // text holds neither key: secure-json-parse would find nothing, after two scans of it.
    value = unsuspect(text)
      ? JSON.parse(text)
      : secureJsonParse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    done(parseError('FST_ERR_CTP_INVALID_JSON_BODY'));
    return;
  }
  done(null, value);
}

/**
 * The one way a JSON body becomes a value: uncompressed UTF-8 only (a declared charset other than
 * UTF-8 or a Content-Encoding is a 415, bytes that are not UTF-8 a 400), fastify's parser with its prototype-poisoning guards,
 * and nesting bounded (every later walk over the value, and JSON.stringify, recurse).
 */
export const jsonBody: JsonBody = (request, raw, done) => {
  const encoding = request.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    done(new HttpError(415, `Content-Encoding ${encoding} is not accepted: send the JSON body uncompressed.`));
    return;
  }
  const header = request.headers['content-type'];
  // The usual header has no parameters: no charset to look for.
  const { type, charset } =
    header === JSON_CONTENT_TYPE ? { type: header, charset: undefined } : parseContentType(header);
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) {
    done(
      new HttpError(
        415,
        `Content-Type ${type}; charset=${charset} is not accepted: JSON bodies are UTF-8 (send charset=utf-8 or no charset).`,
      ),
    );
    return;
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    done(
      new HttpError(400, 'The body is not valid UTF-8: JSON bodies must be UTF-8 text.', { title: 'Malformed JSON' }),
    );
    return;
  }
  if (exceedsKeys(text)) {
    done(
      new HttpError(
        413,
        `The JSON body holds more than ${MAX_JSON_KEYS.toLocaleString('en-US')} distinct object keys.`,
      ),
    );
    return;
  }
  parseJson(text, (error, value) => {
    if (error) done(error);
    else if (exceedsDepth(value, MAX_DEPTH))
      done(new HttpError(400, `The JSON is nested deeper than ${MAX_DEPTH} levels.`));
    else done(null, value);
  });
};

/**
 * Request bodies of the API: `application/json`, and `application/merge-patch+json` on PATCH
 * only (PATCH routes refuse every other type with a 415 of their own). No other type is parsed:
 * plain text or a merge patch elsewhere is a 415, not a value the route would misread.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'buffer' }, jsonBody);
  app.addContentTypeParser(MERGE_PATCH_CONTENT_TYPE, { parseAs: 'buffer' }, (request, raw, done) => {
    if (request.method !== 'PATCH') {
      done(
        new HttpError(
          415,
          `Content-Type ${MERGE_PATCH_CONTENT_TYPE} is for PATCH only; send ${request.method} with ${JSON_CONTENT_TYPE}.`,
        ),
      );
      return;
    }
    jsonBody(request, raw as Buffer, done);
  });
}

/** PATCH takes RFC 7386 merge patches only (spec 4.3, 4.4): anything else is a 415. */
export function requireMergePatch(contentType: string | undefined): void {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type !== MERGE_PATCH_CONTENT_TYPE) {
    throw new HttpError(
      415,
      `PATCH takes a JSON merge patch: send Content-Type ${MERGE_PATCH_CONTENT_TYPE}${type ? `, not ${type}` : ''}.`,
    );
  }
}
