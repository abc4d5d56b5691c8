import type { CommandDefinition, CommandGroup } from '../registry.js';
import { applications } from './applications/index.js';
import { init } from './init.js';
import { invoke } from './invoke/index.js';
import { profiles } from './profiles/index.js';
import { proxies } from './proxies/index.js';
import { reactors } from './reactors/index.js';
import { serve } from './serve.js';
import { detokenize, tokenize } from './tokenize.js';
import { tokens } from './tokens/index.js';
import { transactions } from './transactions/index.js';
import { webhooks } from './webhooks.js';

/** Every command of svc, in the order --help lists them. */
export const commands: (CommandDefinition<never> | CommandGroup)[] = [
  serve,
  init,
  applications,
  reactors,
  proxies,
  invoke,
  tokens,
  tokenize,
  detokenize,
  transactions,
  webhooks,
  profiles,
];
