import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import type { Reactor } from '../../../api/types.js';
import type { Output } from '../../io/output.js';

export const reactorArg = { name: 'reactor', description: 'reactor id or exact name' } as const;

export const reactorOptions = [
  { flags: '--name <name>', description: `name (up to ${MAX_NAME_LENGTH} characters)` },
  {
    flags: '--code <file>',
    description: 'file with the reactor code (CommonJS: module.exports = async function (req) {...})',
  },
  { flags: '--configuration <pair>', description: 'KEY=VALUE, or @file.env (repeatable)', repeatable: true },
  { flags: '--application <application>', description: 'Application (id or name) whose permissions req.svc gets' },
] as const;

export async function showReactor(output: Output, reactor: Reactor): Promise<void> {
  const lines = reactor.code.replace(/\n$/, '').split('\n').length;
  await output.fields([
    ['id', reactor.id],
    ['name', reactor.name],
    ['application', reactor.application ? `${reactor.application.name} (${reactor.application.id})` : '(none)'],
    ['configuration', Object.keys(reactor.configuration).join(', ') || '(none)'],
    ['code', `${lines} line${lines === 1 ? '' : 's'}`],
    ['created', reactor.created_at],
    ['modified', reactor.modified_at],
  ]);
}
