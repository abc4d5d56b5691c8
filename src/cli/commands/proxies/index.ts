import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { remove } from './delete.js';
import { get } from './get.js';
import { list } from './list.js';
import { patch } from './patch.js';
import { update } from './update.js';

export const proxies: CommandGroup = {
  name: 'proxies',
  description: 'manage pre-configured proxies (svc invoke proxy calls one)',
  commands: [list, get, create, update, patch, remove],
};
