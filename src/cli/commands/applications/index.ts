import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { remove } from './delete.js';
import { get } from './get.js';
import { list } from './list.js';
import { regenerate } from './regenerate.js';
import { update } from './update.js';
import { whoami } from './whoami.js';

export const applications: CommandGroup = {
  name: 'applications',
  aliases: ['apps'],
  description: 'manage Applications: API keys, permissions and access rules',
  commands: [list, get, create, update, remove, regenerate, whoami],
};
