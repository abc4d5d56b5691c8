import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { remove } from './delete.js';
import { get } from './get.js';
import { list } from './list.js';
import { patch } from './patch.js';
import { result } from './result.js';
import { update } from './update.js';

export const reactors: CommandGroup = {
  name: 'reactors',
  description: 'manage reactors: stored code run on demand (svc invoke reactor runs one)',
  commands: [list, get, create, update, patch, remove, result],
};
