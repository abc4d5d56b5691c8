import { TOKEN_TYPES } from '../../../api/types.js';
import { defineCommand } from '../../registry.js';
import { transactionOption } from './shared.js';
import { notePages, pageQuery, pagingOptions, emptyPage } from '../paging.js';

export const list = defineCommand({
  name: 'list',
  aliases: ['ls'],
  description: 'list the tokens you may read',
  options: [
    { flags: '--container <container>', description: 'only tokens in this container or below it' },
    { flags: '--type <type>', description: 'only tokens of this type', choices: TOKEN_TYPES },
    ...pagingOptions,
    transactionOption,
  ],
  async handler({ options }, ctx) {
    const query = { container: options.container, type: options.type, ...pageQuery(options) };
    const client = await ctx.client();
    const page = await client.tokens.list(query, options.transaction);
    await ctx.output.result(page, async () => {
      await ctx.output.table(
        page.data,
        [
          { header: 'ID', value: (token) => token.id },
          { header: 'TYPE', value: (token) => token.type },
          { header: 'CONTAINERS', value: (token) => token.containers.join(',') },
          { header: 'DATA', value: (token) => ('data' in token ? JSON.stringify(token.data) : '(redacted)') },
          { header: 'CREATED', value: (token) => token.created_at },
        ],
        emptyPage(page.pagination, 'No tokens.'),
      );
      notePages(ctx.output, page.pagination, 'tokens');
    });
  },
});
