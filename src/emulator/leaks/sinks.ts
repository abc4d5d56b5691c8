/**
 * The guard's checks where they need more than a text: an answer that streams, and the requests
 * user code sends (an interceptor on the outbound gateway, typed by shape: outbound sits above
 * this folder and hands it the call's secrets).
 */
import { readAll } from '../../lib/read-all.js';
import { type Readable, Transform } from 'node:stream';
import type { TextDecoder } from 'node:util';
import type { EmitEvent } from '../events.js';
import { headerText, type LeakCall, LeakGuard, type LeakMode, type LeakPlace } from './guard.js';
import { decoded, decoderFor } from './charset.js';
import type { CallSecrets } from './secrets.js';

/** Kept from one chunk to the next: a card number with separators, or a value's longest form, may span two. */
const CARRY_MIN = 64;

/**
 * A streamed answer, scanned as it passes (warn mode: it is never held back): each chunk searched
 * with the end of the one before, so a value cut in two is found. Told once per form.
 */
export function scannedStream(
  guard: LeakGuard,
  call: LeakCall,
  place: LeakPlace,
  body: Readable,
  headers?: Record<string, string | string[] | number | undefined>,
): Readable {
  // Its charset as declared, or as its first bytes' byte order mark says.
  let decoder: TextDecoder | undefined;
  const carry = Math.max(CARRY_MIN, call.secrets.longest * 2);
  let tail = '';
  const scan = (text: string) => {
    const window = tail + text;
    const found = guard.findIn(call.secrets, window);
    if (found.length > 0) guard.tell(call, place, found, 'warned');
    tail = window.slice(-carry);
  };
  const pass = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      decoder ??= decoderFor(headers, chunk);
      scan(decoder.decode(chunk, { stream: true }));
      done(null, chunk);
    },
    flush(done) {
      scan(decoder?.decode() ?? '');
      done();
    },
  });
  body.on('error', (error) => pass.destroy(error));
  pass.on('close', () => {
    if (!body.destroyed) body.destroy();
  });
  return body.pipe(pass);
}

/** A request as the gateway sends it (outbound/types.ts OutboundRequest), by the members checked. */
interface SentRequest {
  url: URL;
  method?: string;
  headers: Record<string, string>;
  body: Buffer | string | Readable | undefined;
}

/** Who sends it (outbound/types.ts OutboundOrigin), by the members read. */
interface SentBy {
  kind: 'proxy' | 'reactor' | 'transform';
  traceId: string;
  watchId?: string | undefined;
  secrets?: CallSecrets | undefined;
}

/**
 * The check of user code's https requests: a reactor's or a transform's code sending its call's
 * plaintext (or a card number) anywhere but a host declared for it (leakGuardAllowHosts) or, for a
 * transform, its proxy's destination, is told (warn) or refused (fail: the request fails with the
 * leak problem's detail, the call answers it). The whole request is looked at as it would leave:
 * its URL (host, path, query), its headers, its body; a body the code writes over time is scanned
 * as it passes (warn) or read whole before it is sent (fail). A proxy's forward is what the proxy
 * is for: not checked.
 */
export function leakInterceptor(guard: LeakGuard) {
  return async <Q extends SentRequest, A>(request: Q, origin: SentBy, next: (request: Q) => Promise<A>): Promise<A> => {
    if (!guard.on || origin.kind === 'proxy') return next(request);
    const call = guard.callOf(origin.watchId);
    if (!call || call.destination === request.url.origin || guard.allowsHost(request.url)) return next(request);
    const { body } = request;
    const line = `${request.method ?? ''} ${request.url.href}`;
    const headers = headerText(request.headers);
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) {
      guard.check(call, 'outbound', body === undefined ? line : `${line}\n${decoded(body, request.headers)}`, headers);
      return next(request);
    }
    guard.check(call, 'outbound', line, headers);
    if (guard.mode !== 'fail')
      return next({ ...request, body: scannedStream(guard, call, 'outbound', body, request.headers) });
    // Bounded where it is written (the sandbox's outbound requests: MAX_OUTBOUND_BODY_BYTES).
    const whole = await readAll(body);
    guard.check(call, 'outbound', decoded(whole, request.headers));
    return next({ ...request, body: whole });
  };
}

/**
 * The emulator's guard (createEmulator): every event's text redacted of its call's plaintext before
 * it is published (`emit`), and the check of user code's requests on the gateway.
 */
export function leakGuarded(
  options: {
    leakGuard?: LeakMode | undefined;
    leakGuardAllow?: string[] | undefined;
    leakGuardAllowHosts?: string[] | undefined;
  },
  publish: EmitEvent,
  gateway: { use(interceptor: ReturnType<typeof leakInterceptor>): unknown },
): { leaks: LeakGuard; emit: EmitEvent } {
  const leaks = new LeakGuard(
    options.leakGuard ?? 'warn',
    options.leakGuardAllow ?? [],
    publish,
    options.leakGuardAllowHosts ?? [],
  );
  gateway.use(leakInterceptor(leaks));
  return { leaks, emit: leaks.redactingEvents(publish) };
}
