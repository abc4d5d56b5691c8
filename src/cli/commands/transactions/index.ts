import type { CommandGroup } from '../../registry.js';
import { commit } from './commit.js';
import { create } from './create.js';
import { get } from './get.js';
import { rollback } from './rollback.js';

export const transactions: CommandGroup = {
  name: 'transactions',
  description: 'group token writes: create, commit, rollback (Enterprise tier)',
  commands: [create, get, commit, rollback],
};
