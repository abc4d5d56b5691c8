import { intOption } from '../../input.js';
import { defineCommand } from '../../registry.js';
import { emptyPage, notePages, pagingOptions } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list reactors',
  options: [
    { flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' },
    ...pagingOptions,
  ],
  async handler({ options }, ctx) {
    const page = await (await ctx.client()).reactors.list({ name: options.name, page: intOption(options.page, '--page'), size: intOption(options.size, '--size') });
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (reactor) => reactor.id },
          { header: 'NAME', value: (reactor) => reactor.name },
          { header: 'APPLICATION', value: (reactor) => reactor.application?.name ?? '-' },
          { header: 'MODIFIED', value: (reactor) => reactor.modified_at },
        ],
        emptyPage(page.pagination, 'No reactors.'),
      );
      notePages(ctx.output, page.pagination, 'reactors');
    });
  },
});
