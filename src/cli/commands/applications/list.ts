import { intOption } from '../../input.js';
import { summarizePermissions } from './shared.js';
import { defineCommand } from '../../registry.js';

interface ListOptions {
  page?: string;
  size?: string;
  id?: string[];
}

export const list = defineCommand<ListOptions>({
  name: 'list',
  aliases: ['ls'],
  description: 'list Applications',
  options: [
    { flags: '--page <n>', description: 'page number (from 1)' },
    { flags: '--size <n>', description: 'page size (1-100, default 20)' },
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
        'No Applications.',
      );
      const { page_number, total_pages, total_items } = page.pagination;
      if (total_pages > 1) ctx.output.note(`Page ${page_number} of ${total_pages} (${total_items} Applications); --page for more.`);
    });
  },
});
