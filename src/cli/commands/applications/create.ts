import { APPLICATION_TYPES } from '../../../api/permissions.js';
import { defineCommand } from '../../registry.js';
import { createApplicationBody, parseRules } from '../../../resources/applications.js';
import { showApplication } from './shared.js';

export const create = defineCommand({
  name: 'create',
  description: 'create an Application (its key is shown once)',
  options: [
    { flags: '--name <name>', description: 'name (up to 200 characters)', required: true },
    { flags: '--type <type>', description: 'Application type', choices: APPLICATION_TYPES, required: true },
    { flags: '--permission <permission>', description: 'permission to grant (repeatable)', repeatable: true },
    { flags: '--rule <json>', description: 'access rule as JSON (repeatable)', repeatable: true },
    { flags: '--expires-at <date-time>', description: 'delete the Application at this ISO 8601 time' },
  ],
  examples: [
    'svc applications create --name backend --type private --permission token:create --permission token:read',
    `svc applications create --name reader --type private --rule '{"priority":1,"container":"/pci/","transform":"mask","permissions":["token:read"]}'`,
  ],
  async handler({ options }, ctx) {
    const client = await ctx.client();
    const rules = options.rule && parseRules(options.rule, '--rule');
    const app = await client.applications.create(
      createApplicationBody({
        name: options.name,
        type: options.type,
        permissions: options.permission,
        rules,
        expiresAt: options.expiresAt,
      }),
    );
    await ctx.output.result(app, () => showApplication(ctx.output, app));
  },
});
