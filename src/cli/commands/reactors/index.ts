import { configurationPatch } from '../../../resources/configuration.js';
import { readCodeFile, readConfiguration } from '../../../resources/files.js';
import { resolveReactorId } from '../../../resources/lookup.js';
import { createReactorBody, patchReactorBody, updateReactorBody } from '../../../resources/reactors.js';
import { UsageError } from '../../errors.js';
import { intOption } from '../../input.js';
import { defineCommand, type CommandGroup } from '../../registry.js';
import { applicationFlag } from '../applications/shared.js';
import { notePages, pagingOptions } from '../paging.js';
import { reactorArg, reactorOptions, showReactor } from './shared.js';

interface ReactorFlags {
  name?: string;
  code?: string;
  configuration?: string[];
  application?: string;
}

const list = defineCommand<{ page?: string; size?: string; name?: string }>({
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
        'No reactors.',
      );
      notePages(ctx.output, page.pagination, 'reactors');
    });
  },
});

const get = defineCommand<{ showCode?: boolean }>({
  name: 'get',
  description: 'show a reactor',
  args: [reactorArg],
  options: [{ flags: '--show-code', description: 'print the code too' }],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const reactor = await client.reactors.get(await resolveReactorId(client, args.reactor!));
    await ctx.output.result(reactor, async () => {
      await showReactor(ctx.output, reactor);
      if (options.showCode) ctx.output.line(`\n${reactor.code}`);
    });
  },
});

const create = defineCommand<ReactorFlags>({
  name: 'create',
  description: 'create a reactor from a code file (checked to load)',
  options: reactorOptions,
  examples: ['svc reactors create --name charge --code reactors/charge.js --configuration API_URL=https://example.com --application backend'],
  async handler({ options }, ctx) {
    if (options.name === undefined || options.code === undefined) throw new UsageError('A reactor needs --name and --code.');
    const client = await ctx.client();
    const applicationId = await applicationFlag(client, options.application);
    const reactor = await client.reactors.create(
      createReactorBody({
        name: options.name,
        code: await readCodeFile(options.code, ctx.io.cwd),
        configuration: await readConfiguration(options.configuration, ctx.io.cwd, '--configuration'),
        applicationId,
      }),
    );
    await ctx.output.result(reactor, () => showReactor(ctx.output, reactor));
  },
});

const update = defineCommand<Omit<ReactorFlags, 'application'> & { application?: string | false }>({
  name: 'update',
  description: 'replace a reactor (PUT); fields not given keep their current values',
  args: [reactorArg],
  options: [...reactorOptions, { flags: '--no-application', description: 'unbind the Application' }],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor!);
    const current = await client.reactors.get(id);
    if (options.application === '') throw new UsageError('--application takes an Application id or name; --no-application unbinds it.');
    const applicationId = await applicationFlag(client, options.application);
    const code = options.code === undefined ? undefined : await readCodeFile(options.code, ctx.io.cwd);
    const configuration = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const body = updateReactorBody(current, { name: options.name, code, configuration, applicationId });
    const reactor = await client.reactors.update(id, body);
    await ctx.output.result(reactor, () => showReactor(ctx.output, reactor));
  },
});

const patch = defineCommand<Omit<ReactorFlags, 'application'> & { application?: string | false; unset?: string[] }>({
  name: 'patch',
  description: 'change some fields of a reactor (JSON merge patch); --configuration pairs merge into the current ones',
  args: [reactorArg],
  options: [
    ...reactorOptions,
    { flags: '--unset <key>', description: 'remove a configuration key (repeatable)', repeatable: true },
    { flags: '--no-application', description: 'unbind the Application' },
  ],
  async handler({ args, options }, ctx) {
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor!);
    const set = await readConfiguration(options.configuration, ctx.io.cwd, '--configuration');
    const code = options.code === undefined ? undefined : await readCodeFile(options.code, ctx.io.cwd);
    // `--application ''` is no change, as before: only a name or --no-application changes the binding.
    const applicationId = await applicationFlag(client, options.application === '' ? undefined : options.application);
    const patch = patchReactorBody({ name: options.name, code, configuration: configurationPatch(set, options.unset), applicationId });
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: pass --name, --code, --configuration, --unset or --[no-]application.');
    await client.reactors.patch(id, patch);
    await ctx.output.result({ id, patched: Object.keys(patch) }, () => ctx.output.line(`Patched reactor ${id} (${Object.keys(patch).join(', ')}).`));
  },
});

const remove = defineCommand({
  name: 'delete',
  aliases: ['rm'],
  description: 'delete a reactor',
  args: [reactorArg],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const id = await resolveReactorId(client, args.reactor!);
    await client.reactors.delete(id);
    await ctx.output.result({ id, deleted: true }, () => ctx.output.line(`Deleted reactor ${id}.`));
  },
});

const result = defineCommand({
  name: 'result',
  description: 'show the result of an asynchronous invocation',
  args: [reactorArg, { name: 'request-id', description: 'the id the invocation answered with (202)' }],
  async handler({ args }, ctx) {
    const client = await ctx.client();
    const outcome = await client.reactors.result(await resolveReactorId(client, args.reactor!), args['request-id']!);
    await ctx.output.result(outcome, () => ctx.output.line(JSON.stringify(outcome, null, 2)));
  },
});

export const reactors: CommandGroup = {
  name: 'reactors',
  description: 'manage reactors: stored code run on demand (svc invoke reactor runs one)',
  commands: [list, get, create, update, patch, remove, result],
};
