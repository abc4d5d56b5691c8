import type { CommandGroup } from '../../registry.js';
import { proxy } from './proxy.js';
import { reactor } from './reactor.js';

export const invoke: CommandGroup = {
  name: 'invoke',
  description: 'invoke a reactor or a proxy',
  commands: [reactor, proxy],
};
