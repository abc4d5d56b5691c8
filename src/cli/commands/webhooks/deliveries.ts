/** A webhook delivery (`GET /_emulator/webhooks`) in words for a person. */
import type { WebhookDeliveryEntry } from '../../../api/types.js';

/** The last attempt's outcome: `503`, `ECONNREFUSED`, or `-` before any. */
export function lastOutcome(delivery: WebhookDeliveryEntry): string {
  if (delivery.attempts === 0) return '-';
  return delivery.last_status !== null ? String(delivery.last_status) : (delivery.last_error ?? 'no answer');
}

/** One line per attempt: `#2  2026-11-27T10:00:01.000Z  503` (`(resend)` for one asked for). */
export function attemptLines(delivery: WebhookDeliveryEntry): string[] {
  return delivery.attempt_log.map(
    (attempt) =>
      `#${attempt.attempt}  ${attempt.at}  ${attempt.status ?? attempt.error ?? 'no answer'}${attempt.resend ? '  (resend)' : ''}`,
  );
}
