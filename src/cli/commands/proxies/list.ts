import { defineCommand } from '../../registry.js';
import { notePages, pageQuery, pagingOptions, emptyPage } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list proxies',
  options: [{ flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' }, ...pagingOptions],
  async handler({ options }, ctx) {
    const query = { name: options.name, ...pageQuery(options) };
    const page = await (await ctx.client()).proxies.list(query);
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (proxy) => proxy.id },
          { header: 'NAME', value: (proxy) => proxy.name },
          { header: 'DESTINATION', value: (proxy) => proxy.destination_url },
          { header: 'AUTH', value: (proxy) => (proxy.require_auth ? 'required' : 'anonymous') },
          {
            header: 'TRANSFORMS',
            value: (proxy) =>
              [proxy.request_transform && 'request', proxy.response_transform && 'response']
                .filter(Boolean)
                .join(',') || '-',
          },
        ],
        emptyPage(page.pagination, 'No proxies.'),
      );
      notePages(ctx.output, page.pagination, 'proxies');
    });
  },
});
