import type { CommandGroup, RegisteredCommand } from '../registry.js';
import { applications } from './applications/index.js';
import { apply } from './apply.js';
import { completion } from './completion.js';
import { detokenize } from './detokenize.js';
import { importCommand } from './import.js';
import { init } from './init.js';
import { invoke } from './invoke/index.js';
import { logs } from './logs.js';
import { profiles } from './profiles/index.js';
import { proxies } from './proxies/index.js';
import { reactors } from './reactors/index.js';
import { serve } from './serve.js';
import { tokenize } from './tokenize.js';
import { tokens } from './tokens/index.js';
import { transactions } from './transactions/index.js';
import { version } from './version.js';
import { webhooks } from './webhooks/index.js';

/** Every command of svc, in the order --help lists them. */
export const commands: (RegisteredCommand | CommandGroup)[] = [
  serve,
  init,
  apply,
  importCommand,
  applications,
  reactors,
  proxies,
  invoke,
  logs,
  tokens,
  tokenize,
  detokenize,
  transactions,
  webhooks,
  profiles,
  version,
  completion,
];
