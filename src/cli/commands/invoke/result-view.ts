import type { Problem } from '../../../api/problem.js';
import type { ReactorResult, WebhookDelivery } from '../../../api/types.js';
import { ApiError } from '../../../client/errors.js';
import type { Output } from '../../io/output.js';

/**
 * An asynchronous invocation's result for a person (`svc reactors result`, `svc invoke reactor --wait`):
 * status, what the run returned or its error, when, and where its webhook stands. `--json` prints the
 * API's answer as it is instead.
 */
export async function printResult(output: Output, outcome: ReactorResult, options: { error?: boolean } = {}) {
  const rows: [string, string][] = [
    ['id', outcome.id],
    ['status', outcome.status],
  ];
  if (outcome.error !== undefined && options.error !== false) rows.push(['error', problemLine(outcome.error)]);
  if (outcome.raw !== undefined) rows.push(['raw', JSON.stringify(outcome.raw, null, 2)]);
  if (outcome.tokens !== undefined) rows.push(['tokens', JSON.stringify(outcome.tokens, null, 2)]);
  rows.push(['started', outcome.started_at]);
  if (outcome.completed_at !== undefined) rows.push(['completed', `${outcome.completed_at}${took(outcome)}`]);
  rows.push(['delivery', deliveryLine(outcome.delivery)], ['event id', outcome.delivery.event_id]);
  await output.fields(rows);
}

/** `Bad request (400): amount is required`: a problem as the CLI words its errors. */
export function problemLine(problem: Problem): string {
  return new ApiError(problem.status ?? 500, problem).summary;
}

/** `delivered (1 attempt, 200)`, `pending (2 attempts, last: ECONNREFUSED)`, `failed (6 attempts, last: 500)`. */
export function deliveryLine(delivery: WebhookDelivery): string {
  const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  const last = delivery.last_error ?? (delivery.last_status === null ? undefined : String(delivery.last_status));
  if (delivery.attempts === 0) return `${delivery.status} (no attempt yet)`;
  return `${delivery.status} (${attempts}${last === undefined ? '' : `, last: ${last}`})`;
}

function took(outcome: ReactorResult): string {
  const ms = Date.parse(outcome.completed_at ?? '') - Date.parse(outcome.started_at);
  return Number.isFinite(ms) && ms >= 0 ? ` (ran ${ms} ms)` : '';
}
