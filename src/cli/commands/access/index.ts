import type { CommandGroup } from '../../registry.js';
import { test } from './test.js';

export const access: CommandGroup = {
  name: 'access',
  description: "check Applications' access: a matrix of cases run against the target",
  commands: [test],
};
