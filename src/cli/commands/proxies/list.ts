import { intOption } from '../../input.js';
import { defineCommand } from '../../registry.js';
import { emptyPage, notePages, pagingOptions } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list proxies',
  options: [
    { flags: '--name <pattern>', description: 'only names matching (* is a wildcard)' },
    ...pagingOptions,
  ],
  async handler({ options }, ctx) {
    const page = await (await ctx.client()).proxies.list({ name: options.name, page: intOption(options.page, '--page'), size: intOption(options.size, '--size') });
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (proxy) => proxy.id },
          { header: 'NAME', value: (proxy) => proxy.name },
          { header: 'DESTINATION', value: (proxy) => proxy.destination_url },
          { header: 'AUTH', value: (proxy) => (proxy.require_auth ? 'required' : 'anonymous') },
          { header: 'TRANSFORMS', value: (proxy) => [proxy.request_transform && 'request', proxy.response_transform && 'response'].filter(Boolean).join(',') || '-' },
        ],
        emptyPage(page.pagination, 'No proxies.'),
      );
      notePages(ctx.output, page.pagination, 'proxies');
    });
  },
});
