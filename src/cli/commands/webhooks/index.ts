import type { CommandGroup } from '../../registry.js';
import { secret } from './secret.js';

export const webhooks: CommandGroup = {
  name: 'webhooks',
  description: 'webhooks of asynchronous reactor invocations',
  commands: [secret],
};
