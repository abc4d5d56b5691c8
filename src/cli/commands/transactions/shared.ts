import type { Transaction } from '../../../api/types.js';
import type { Output } from '../../io/output.js';

export const transactionArg = { name: 'id', description: 'transaction id' } as const;

export async function showTransaction(output: Output, transaction: Transaction): Promise<void> {
  await output.fields([
    ['id', transaction.id],
    ['status', transaction.status],
    ['created', transaction.created_at],
    ['expires', transaction.expires_at],
  ]);
}
