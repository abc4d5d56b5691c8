/** A webhook delivery as `GET /_emulator/webhooks` answers it, and its words for a person. */
import type { Pagination } from '../../../api/types.js';

export interface Delivery {
  id: string;
  reactor_id: string;
  reactor: string | null;
  callback_url: string;
  event_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status: number | null;
  last_error?: string;
  next_attempt_at?: string;
  created_at: string;
  attempt_log: { attempt: number; at: string; status: number | null; error?: string; resend?: true }[];
}

export interface DeliveryPage {
  pagination: Pagination;
  data: Delivery[];
}

/** The last attempt's outcome: `503`, `ECONNREFUSED`, or `-` before any. */
export function lastOutcome(delivery: Delivery): string {
  if (delivery.attempts === 0) return '-';
  return delivery.last_status !== null ? String(delivery.last_status) : (delivery.last_error ?? 'no answer');
}

/** One line per attempt: `#2  2026-11-27T10:00:01.000Z  503` (`(resend)` for one asked for). */
export function attemptLines(delivery: Delivery): string[] {
  return delivery.attempt_log.map(
    (attempt) =>
      `#${attempt.attempt}  ${attempt.at}  ${attempt.status ?? attempt.error ?? 'no answer'}${attempt.resend ? '  (resend)' : ''}`,
  );
}
