import type { CommandGroup } from '../../registry.js';
import { create } from './create.js';
import { fork } from './fork.js';
import { list } from './list.js';

export const tenants: CommandGroup = {
  name: 'tenants',
  description: "the emulator's tenants (loopback only): create one with its keys, fork one, list them",
  commands: [create, fork, list],
};
