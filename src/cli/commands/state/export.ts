import path from 'node:path';
import type { StateDocument } from '../../../api/state.js';
import type { ApiClient } from '../../../client/index.js';
import type { IO } from '../../io/process.js';
import { defineCommand } from '../../registry.js';
import { passphrase, sealedDocument, writeStateFile } from './file.js';
import { StateSeal } from './seal.js';

export const exportCommand = defineCommand({
  name: 'export',
  description:
    "write the tenant's Applications, reactors, proxies and tokens to a file (secrets sealed with a passphrase)",
  args: [{ name: 'file', description: 'the state file to write (replaced atomically)' }],
  options: [
    { flags: '--plaintext', description: 'write token data, configuration and proxy keys in clear (with a warning)' },
  ],
  notes: ['The passphrase is SVC_STATE_PASSPHRASE, or asked on a terminal; import needs the same one.'],
  examples: ['SVC_STATE_PASSPHRASE=... svc state export state.json', 'svc state export state.json --plaintext'],
  async handler({ args, options }, ctx) {
    const plaintext = options.plaintext === true;
    const written = await exportState(await ctx.client(), ctx.io, args.file, plaintext);
    if (plaintext)
      ctx.output.note(
        `Warning: ${args.file} holds token data, configuration and proxy keys in clear; keep it out of git and shared folders.`,
      );
    await ctx.output.result({ file: written.file, counts: written.counts, sealed: !plaintext }, () =>
      ctx.output.line(
        `Exported ${describe(written.counts)} to ${args.file}${plaintext ? ' (in clear)' : ' (secrets sealed)'}.`,
      ),
    );
  },
});

/**
 * The tenant's state written to `file`: fetched whole first, then sealed and written atomically, so
 * a failure at any step leaves the previous file as it was. Also `svc serve --export-on-exit`'s.
 */
export async function exportState(
  client: ApiClient,
  io: IO,
  file: string,
  plaintext: boolean,
): Promise<{ file: string; counts: Record<string, number> }> {
  const seal = plaintext ? undefined : StateSeal.create(await passphrase(io, 'seal'));
  const doc = await client.state.export();
  const target = path.resolve(io.cwd, file);
  await writeStateFile(target, sealedDocument(doc, seal));
  return { file: target, counts: countsOf(doc) };
}

export function countsOf(doc: StateDocument): Record<string, number> {
  return {
    applications: doc.applications.length,
    reactors: doc.reactors.length,
    proxies: doc.proxies.length,
    tokens: doc.tokens.length,
  };
}

export function describe(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([kind, count]) => `${count} ${count === 1 ? kind.replace(/ies$/, 'y').replace(/s$/, '') : kind}`)
    .join(', ');
}
