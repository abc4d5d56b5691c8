import type { CommandGroup } from '../../registry.js';
import { exportCommand } from './export.js';
import { importCommand } from './import.js';
import { reset } from './reset.js';

export const state: CommandGroup = {
  name: 'state',
  description: "the tenant's state as a file: export, import (add, update or --replace), reset",
  commands: [exportCommand, importCommand, reset],
};
