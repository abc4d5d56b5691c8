import { defineCommand } from '../../registry.js';
import { notePages, pageQuery, pagingOptions, emptyPage } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list reactors',
  options: [{ flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' }, ...pagingOptions],
  async handler({ options }, ctx) {
    const query = { name: options.name, ...pageQuery(options) };
    const page = await (await ctx.client()).reactors.list(query);
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
