/**
 * What a call's outcome becomes on its way to the emulator (in the sandbox process): the result's
 * frame, written out once as JSON within the payload limit, or what user code threw, as plain data
 * (a platform error's status, a custom response, a message and stack cut to size).
 */
import { MAX_DEPTH, exceedsDepth } from '../../lib/json-depth.js';
import { megabytes } from '../../lib/megabytes.js';
import type { Loaded } from './compartment.js';
import { withPlatformHint } from './node16.js';
import { REACTOR_ERROR_BASE, isErrorStatus } from './platform-errors.js';
import type { FromSandbox, SerializedError } from './protocol.js';
import { describeThrown, locate } from './stacks.js';

/** What a thrown error may carry to the emulator: a message or stack is cut at this many characters. */
const MAX_ERROR_TEXT = 16 * 1024;
/** The keys of a reactor error's `errors` an answer carries at most. */
const MAX_ERROR_KEYS = 100;
/** A custom response's headers, as JSON, at most. */
const MAX_CUSTOM_HEADERS = 64 * 1024;

/**
 * The answer to call `id` whose function returned `result`: its frame written out (the value is JSON
 * already, not parsed and written again), or a result error (not JSON, nested too deep, over `limit`).
 */
export function resultFrame(id: number, result: unknown, limit: number): FromSandbox | string {
  let value: string;
  try {
    // A function or a symbol has no JSON, as undefined has none: all three answer null.
    value = JSON.stringify(result === undefined ? null : result) ?? 'null';
  } catch (error) {
    // JSON.stringify recurses: a result nested thousands deep overflows the stack. The emulator
    // refuses JSON nested past the limit (400) and says so; this is the same, found sooner.
    if (error instanceof RangeError && exceedsDepth(result, MAX_DEPTH)) {
      return {
        type: 'result',
        id,
        ok: false,
        error: { ...resultError(`The function's result is nested deeper than ${MAX_DEPTH} levels.`), status: 400 },
      };
    }
    return {
      type: 'result',
      id,
      ok: false,
      error: resultError(`The function's result is not JSON: ${(error as Error).message}`),
    };
  }
  if (value.length > limit || Buffer.byteLength(value) > limit) {
    return {
      type: 'result',
      id,
      ok: false,
      error: resultError(
        `The function's result is ${megabytes(Buffer.byteLength(value))} of JSON, over the ${megabytes(limit)} limit.`,
      ),
    };
  }
  return `{"type":"result","id":${id},"ok":true,"value":${value}}`;
}

/** A result that cannot be sent, said as a TypeError of the result (not of the code). */
export function resultError(message: string): SerializedError {
  return { kind: 'result', name: 'TypeError', message };
}

/**
 * What user code threw, as data: a CustomHttpResponseError's response (its body within `limit`),
 * a platform error's status (by class: `class Declined extends BadRequestError {}` is a 400 too),
 * or a name, message and stack, each cut to size. Reading a hostile error never throws.
 */
export function serializeError(error: unknown, loaded: Loaded, limit: number): SerializedError {
  try {
    const custom = loaded.errors.CustomHttpResponseError;
    if (custom && error instanceof custom) {
      const { status, headers, body } = error as unknown as { status: unknown; headers: unknown; body: unknown };
      const headerMap = plainHeaders(headers);
      if (JSON.stringify(headerMap).length > MAX_CUSTOM_HEADERS)
        return resultError(`A CustomHttpResponseError's headers are over ${MAX_CUSTOM_HEADERS / 1024} KiB.`);
      const bodyText = JSON.stringify(body ?? null);
      if (bodyText.length > limit || Buffer.byteLength(bodyText) > limit) {
        return resultError(
          `A CustomHttpResponseError's body is ${megabytes(Buffer.byteLength(bodyText))} of JSON, over the ${megabytes(limit)} limit.`,
        );
      }
      // The status as given: the emulator refuses one outside 200-599 with a problem naming the code.
      return {
        kind: 'user',
        name: 'CustomHttpResponseError',
        message: cut((error as Error).message),
        custom: { status: Number(status), headers: headerMap, body: JSON.parse(bodyText) as unknown },
      };
    }
    if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
      const { name, message, stack } = error as Error;
      const base = loaded.errors[REACTOR_ERROR_BASE];
      const platform = base !== undefined && error instanceof base;
      const status = platform ? (error as { status?: unknown }).status : undefined;
      return {
        kind: 'user',
        name: typeof name === 'string' ? cut(name) : 'Error',
        message: cut(withPlatformHint(String(message))),
        ...(platform && { status: isErrorStatus(status) ? status : 500 }),
        ...(platform && { errors: plainErrors(error) }),
        ...(typeof stack === 'string' && { stack: cut(stack), location: locate(cut(stack), loaded.filename) }),
      };
    }
    return { kind: 'user', name: 'Error', message: cut(`a non-error was thrown: ${describeThrown(error)}`) };
  } catch {
    return { kind: 'user', name: 'Error', message: 'an error was thrown that could not be read' };
  }
}

/** `text`, cut at MAX_ERROR_TEXT characters with a note saying so. */
export function cut(text: string): string {
  return text.length > MAX_ERROR_TEXT
    ? `${text.slice(0, MAX_ERROR_TEXT)}… [cut at ${MAX_ERROR_TEXT} characters]`
    : text;
}

/**
 * A reactor error's `errors` as the answer carries them: string lists by key, whatever the code
 * made of the property since its constructor set it; a key or message cut to size, at most
 * MAX_ERROR_KEYS keys and MAX_ERROR_TEXT characters of text in all. Read item by item, each read
 * on its own: a hole or a null is the vendor's fallback text, a member or item that cannot be read
 * is left out (a list of holes would be nulls, which the emulator refuses from a sandbox, and a
 * list of millions of them a frame over the limit: either stopped the tenant's sandbox process).
 */
function plainErrors(error: unknown): Record<string, string[]> {
  // No prototype: a key `__proto__` is a key like any other.
  const result: Record<string, string[]> = Object.create(null);
  const errors = readOr(() => (error as { errors?: unknown }).errors, undefined);
  if (typeof errors !== 'object' || errors === null) return result;
  let budget = MAX_ERROR_TEXT;
  const keys = readOr(() => Object.keys(errors).slice(0, MAX_ERROR_KEYS), [] as string[]);
  for (const key of keys) {
    const value = readOr(() => (errors as Record<string, unknown>)[key], undefined);
    const items = Array.isArray(value) ? value : [value];
    const messages: string[] = [];
    budget -= key.length;
    const length = readOr(() => items.length, 0);
    for (let i = 0; i < length && budget > 0; i++) {
      const message = cut(textOf(readOr(() => items[i], undefined)));
      budget -= message.length;
      messages.push(message);
    }
    if (budget < 0 || messages.length < length) {
      result[cut(key)] = [`… [errors cut at ${MAX_ERROR_TEXT} characters]`];
      break;
    }
    result[key] = messages;
  }
  return result;
}

/** The vendor's text of an item of `errors` that has none. */
const FALLBACK_TEXT = 'Something went wrong. Please try again.';

/** An item of `errors` as text: a string as it is, nothing as the fallback, anything else as String makes it. */
function textOf(item: unknown): string {
  if (typeof item === 'string') return item;
  if (item === undefined || item === null) return FALLBACK_TEXT;
  return readOr(() => String(item), FALLBACK_TEXT);
}

/** What `read` gives, or `fallback` when user code's getter, proxy or toString throws. */
function readOr<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

function plainHeaders(headers: unknown): Record<string, string> {
  const result: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return result;
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && value !== null) result[name] = String(value);
  return result;
}
