import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import { APPLICATION_TYPES } from '../../../api/permissions.js';
import { defineCommand } from '../../registry.js';
import { createApplicationBody } from '../../../requests/applications.js';
import { dateTimeOption } from '../../io/input.js';
import { allowDuplicateOption, refuseDuplicate } from '../duplicate.js';
import { readRules, showApplication } from './shared.js';
import { DECLINED, confirmWrite, yesOption } from '../../io/confirm.js';

export const create = defineCommand({
  name: 'create',
  description: 'create an Application (its key is shown once)',
  options: [
    { flags: '--name <name>', description: `name (up to ${MAX_NAME_LENGTH} characters)`, required: true },
    { flags: '--type <type>', description: 'Application type', choices: APPLICATION_TYPES, required: true },
    { flags: '--permission <permission>', description: 'permission to grant (repeatable)', repeatable: true },
    {
      flags: '--rule <json>',
      description: 'access rule: JSON, @file or - (stdin); one rule or an array (repeatable)',
      repeatable: true,
    },
    { flags: '--expires-at <date-time>', description: 'delete the Application at this ISO 8601 time' },
    allowDuplicateOption,
    yesOption,
  ],
  examples: [
    'svc applications create --name backend --type private --permission token:create --permission token:read',
    `svc applications create --name reader --type private --rule '{"priority":1,"container":"/pci/","transform":"mask","permissions":["token:read"]}'`,
    'svc applications create --name reader --type private --rule @rules.json',
  ],
  async handler({ options }, ctx) {
    const expiresAt = dateTimeOption(options.expiresAt, '--expires-at');
    const rules = await readRules(options.rule, ctx.io);
    if (!(await confirmWrite(ctx, options.yes, `creating Application "${options.name}"`))) return DECLINED;
    const client = await ctx.client();
    await refuseDuplicate(client, 'Application', options.name, options.allowDuplicate);
    const app = await client.applications.create(
      createApplicationBody({
        name: options.name,
        type: options.type,
        permissions: options.permission,
        rules,
        expiresAt,
      }),
    );
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
