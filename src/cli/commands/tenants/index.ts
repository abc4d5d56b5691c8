import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { list } from './list.js';

export const tenants: CommandGroup = {
  name: 'tenants',
  description: "the emulator's tenants (loopback only): create one with its keys, list them",
  commands: [create, list],
};
