import type { CommandGroup } from '../../registry.js';
import { add } from './add.js';
import { list } from './list.js';
import { remove } from './remove.js';
import { unset, use } from './use.js';

export const profiles: CommandGroup = {
  name: 'profiles',
  description: 'saved targets: a base URL and keys, in $XDG_CONFIG_HOME/svc/config.json',
  commands: [add, list, use, unset, remove],
};
