import type { Token } from '../../../api/types.js';
import type { Output } from '../../io/output.js';

export const transactionOption = {
  flags: '--transaction <id>',
  description: 'act inside this open transaction (SVC-TRANSACTION-ID)',
} as const;

export const tokenArg = { name: 'id', description: 'token id' } as const;

/** One token for people: `data` as the API returned it (revealed, masked, or absent). */
export async function showToken(output: Output, token: Token): Promise<void> {
  await output.fields([
    ['id', token.id],
    ['type', token.type],
    ['containers', token.containers.join(', ')],
    ['data', 'data' in token ? JSON.stringify(token.data, null, 2) : '(redacted)'],
    ['metadata', Object.keys(token.metadata).length ? JSON.stringify(token.metadata) : '(none)'],
    ['created', token.created_at],
    ['expires', token.expires_at ?? 'never'],
  ]);
}

/** Any JSON result for people: indented JSON. */
export function showJson(output: Output, value: unknown): void {
  output.line(JSON.stringify(value, null, 2));
}
