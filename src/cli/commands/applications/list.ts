import { intOption } from '../../input.js';
import { summarizePermissions } from './shared.js';
import { defineCommand } from '../../registry.js';
import { emptyPage, notePages, pagingOptions } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list Applications',
  options: [
    ...pagingOptions,
    { flags: '--id <id>', description: 'only these ids (repeatable)', repeatable: true },
  ],
  async handler({ options }, ctx) {
    const client = await ctx.client();
    const page = await client.applications.list({
      page: intOption(options.page, '--page'),
      size: intOption(options.size, '--size'),
      id: options.id,
    });
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
