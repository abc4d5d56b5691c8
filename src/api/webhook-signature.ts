/**
 * `SVC-SIGNATURE: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`, Stripe's scheme: the time
 * inside the signed text makes a captured delivery useless for replay after a while. The emulator
 * signs with it; svc/testing's receiver and `svc webhooks listen` verify with it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signPayload(secret: string, body: string, timestamp: number): string {
  const digest = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

/** Checks a signature header against a body; for receivers (and tests). */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  toleranceSeconds = 300,
  now = Date.now(),
): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  const timestamp = Number(parts.t);
  if (!Number.isInteger(timestamp) || Math.abs(now / 1000 - timestamp) > toleranceSeconds || !parts.v1) return false;
  const expected = Buffer.from(signPayload(secret, body, timestamp).split('v1=')[1]!, 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
