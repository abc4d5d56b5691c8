import { isUuid } from '../../../api/patterns.js';
import { UsageError } from '../../io/errors.js';
import { summarizePermissions } from './shared.js';
import { defineCommand } from '../../registry.js';
import { notePages, pageQuery, pagingOptions, emptyPage } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list Applications',
  options: [
    { flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' },
    ...pagingOptions,
    { flags: '--id <id>', description: 'only these ids (repeatable)', repeatable: true },
  ],
  async handler({ options }, ctx) {
    for (const id of options.id ?? []) {
      if (!isUuid(id)) throw new UsageError(`--id must be an Application id (a UUID), not "${id}".`);
    }
    const query = { name: options.name, id: options.id, ...pageQuery(options) };
    const client = await ctx.client();
    const page = await client.applications.list(query);
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (app) => app.id },
          { header: 'NAME', value: (app) => app.name },
          { header: 'TYPE', value: (app) => app.type },
          { header: 'PERMISSIONS', value: (app) => summarizePermissions(app.permissions) || '-' },
          { header: 'RULES', value: (app) => String(app.rules.length) },
          { header: 'EXPIRES', value: (app) => app.expires_at ?? '-' },
        ],
        emptyPage(page.pagination, 'No Applications.'),
      );
      notePages(ctx.output, page.pagination, 'Applications');
    });
  },
});
