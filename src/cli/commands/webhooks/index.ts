import type { CommandGroup } from '../../registry.js';
import { list } from './list.js';
import { listen } from './listen.js';
import { resend } from './resend.js';
import { secret } from './secret.js';

export const webhooks: CommandGroup = {
  name: 'webhooks',
  description: 'webhooks of asynchronous reactor invocations: their deliveries, a resend, a local receiver',
  commands: [list, resend, listen, secret],
};
