import type { IncomingMessage } from 'node:http';
import type { EmulatorEvent } from '../api/events.js';
import { API_KEY_HEADER } from '../api/headers.js';
import { problemFromAnswer } from '../api/problem.js';
import { ApiError, ConnectionError, UnexpectedResponseError } from './errors.js';

/** The stream broke off before its end (the server stopped or the connection dropped). */
export class EventStreamEndedError extends Error {
  override readonly name = 'EventStreamEndedError';
}

/** The server has no event stream (a 404): not the emulator, or one from before `svc logs`. */
export class EventStreamUnavailableError extends Error {
  override readonly name = 'EventStreamUnavailableError';
  constructor(readonly url: string) {
    super(`The server at ${url} has no event stream (GET /_emulator/events answered 404); the emulator has one.`);
  }
}

/**
 * The server sent nothing for the silence window, not even the heartbeat the emulator writes every
 * 15 s: it accepted the connection but stopped answering (frozen, or a proxy holding it).
 */
export class EventStreamSilentError extends Error {
  override readonly name = 'EventStreamSilentError';
  constructor(
    readonly url: string,
    readonly silenceMs: number,
  ) {
    super(
      `The server at ${url} sent nothing for ${shownDuration(silenceMs)} (not even a heartbeat): it seems frozen; the event stream was closed.`,
    );
  }
}

export interface EventStreamOptions {
  /**
   * How long the server may send nothing before the stream is given up: more than twice the
   * emulator's heartbeat (15 s), so a late heartbeat is no alarm. Default 45 s.
   */
  silenceMs?: number;
}

const SILENCE_MS = 45_000;

/** Far more than one event takes (a console line is 64 KiB at most): a server that sends more is not the emulator. */
const MAX_EVENT_CHARS = 4 << 20;

/**
 * Reads `GET /_emulator/events` (server-sent events) as it arrives: a plain node:http(s) request,
 * since fetch reads no stream as simply and the answer may never end. Returns when the server ends
 * the answer or `signal` aborts; throws ApiError for a refusal, ConnectionError when nothing
 * answers, EventStreamEndedError when the connection breaks mid-stream.
 */
export async function* readEventStream(
  url: URL,
  managementKey: string,
  signal: AbortSignal,
  { silenceMs = SILENCE_MS }: EventStreamOptions = {},
): AsyncGenerator<EmulatorEvent> {
  const { request } = await import(url.protocol === 'https:' ? 'node:https' : 'node:http');
  const headers = { accept: 'text/event-stream', [API_KEY_HEADER]: managementKey };
  let silent = false;
  let response: IncomingMessage;
  try {
    response = await new Promise<IncomingMessage>((resolve, reject) => {
      const sent = request(url, { method: 'GET', headers, signal }, resolve);
      sent.once('error', reject);
      // No byte for the window, before the answer or in it: the connection is given up.
      sent.setTimeout(silenceMs, () => {
        silent = true;
        sent.destroy();
      });
      sent.end();
    });
  } catch (error) {
    if (silent) throw new EventStreamSilentError(url.origin, silenceMs);
    if (signal.aborted) return;
    const { code, message } = error as NodeJS.ErrnoException;
    throw new ConnectionError(url.origin, code, message);
  }
  response.setEncoding('utf8');
  const type = response.headers['content-type'] ?? '';
  if (response.statusCode === 404) {
    response.destroy();
    throw new EventStreamUnavailableError(url.origin);
  }
  if ((response.statusCode ?? 0) >= 400) {
    let text = '';
    for await (const chunk of response) {
      text += chunk as string;
      if (text.length > MAX_EVENT_CHARS) break;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UnexpectedResponseError(url.origin, response.statusCode ?? 0, type);
    }
    throw new ApiError(response.statusCode ?? 0, problemFromAnswer(response.statusCode ?? 0, parsed, text), {
      key: 'management',
    });
  }
  if (!type.startsWith('text/event-stream')) {
    response.destroy();
    throw new UnexpectedResponseError(url.origin, response.statusCode ?? 0, type);
  }
  let pending = '';
  try {
    for await (const chunk of response) {
      pending += chunk as string;
      const blocks = pending.split('\n\n');
      pending = blocks.pop() ?? '';
      if (pending.length > MAX_EVENT_CHARS) throw new Error(`an event longer than ${MAX_EVENT_CHARS} characters`);
      for (const block of blocks) {
        // Comment lines (`: heartbeat`) keep the connection alive and say nothing.
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (data !== '') yield JSON.parse(data) as EmulatorEvent;
      }
    }
  } catch (error) {
    if (silent) throw new EventStreamSilentError(url.origin, silenceMs);
    if (signal.aborted) return;
    throw new EventStreamEndedError(`the event stream ended unexpectedly (${(error as Error).message})`);
  }
  if (silent) throw new EventStreamSilentError(url.origin, silenceMs);
  // A clean end is the caller's to judge (expected without follow); an answer cut short is not clean.
  if (!response.complete && !signal.aborted) throw new EventStreamEndedError('the event stream ended unexpectedly');
}

function shownDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
