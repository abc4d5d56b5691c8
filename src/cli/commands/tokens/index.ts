import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { remove } from './delete.js';
import { get } from './get.js';
import { list } from './list.js';

export const tokens: CommandGroup = {
  name: 'tokens',
  description: 'create, read, list and delete tokens (uses the API key)',
  commands: [list, get, create, remove],
};
