/**
 * The `--json` outputs of the commands that have no resource to show (delete, patch, commit, rollback), as
 * the README's CLI section documents them: each one JSON document, of the documented shape.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { runSvc } from '../helpers/cli.js';
import { createApplication, createToken, startEmulator, unique } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

interface Documented {
  noun: string;
  verb: string;
  shape: Record<string, unknown>;
}

/** The rows of the README's table: `| \`nouns verb\` | \`{...}\` |`, one row per noun. */
async function documented(): Promise<Documented[]> {
  const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^ *\| `([a-z\\|]+) ([a-z]+)` \| `(\{.*?\})`/gm)];
  return rows.flatMap(([, nouns, verb, json]) => {
    // `"<id>"` and `["<field>", …]` stand for any id and any list of fields.
    const shape = JSON.parse(json!.replace('["<field>", …]', '"<fields>"')) as Record<string, unknown>;
    return nouns!.split('\\|').map((noun) => ({ noun, verb: verb!, shape }));
  });
}

describe('the --json of delete, patch, commit and rollback', () => {
  test('is one JSON document of the shape the README documents, for every command it lists', async () => {
    const rows = await documented();
    expect(rows.map((row) => `${row.noun} ${row.verb}`).sort()).toEqual([
      'applications delete',
      'proxies delete',
      'proxies patch',
      'reactors delete',
      'reactors patch',
      'tokens delete',
      'transactions commit',
      'transactions rollback',
    ]);

    const emu = await startEmulator({ inMemory: true });
    const cwd = await tempDir();
    const svc = (line: string[]) =>
      runSvc(
        [...line, '--json', '--base-url', emu.url, '--management-key', emu.managementKey, '--api-key', emu.privateKey],
        { cwd },
      );
    await writeFile(path.join(cwd, 'code.js'), 'module.exports = async (req) => req;\n');
    const ids: Record<string, () => Promise<{ id: string; args: string[] }>> = {
      applications: async () => ({
        id: (await createApplication(emu, { type: 'private', permissions: ['token:read'] })).id,
        args: [],
      }),
      tokens: async () => ({ id: (await createToken(emu, { type: 'token', data: 'x' })).id, args: [] }),
      reactors: async () => {
        const created = await emu.call('POST', '/reactors', {
          body: { name: unique('r'), code: 'module.exports = async () => ({});', configuration: {} },
        });
        return { id: created.body.id, args: ['--configuration', 'A=1'] };
      },
      proxies: async () => {
        const created = await emu.call('POST', '/proxies', {
          body: { name: unique('p'), destination_url: 'http://127.0.0.1:9' },
        });
        return { id: created.body.id, args: ['--request-transform', 'code.js'] };
      },
      transactions: async () => ({
        id: (await emu.call('POST', '/transactions', { key: emu.privateKey })).body.id,
        args: [],
      }),
    };

    for (const { noun, verb, shape } of rows) {
      const { id, args } = await ids[noun]!();
      // Destructive verbs need --yes without a terminal.
      const yes = verb === 'delete' || verb === 'rollback' ? ['--yes'] : [];
      const result = await svc([noun, verb, id, ...(verb === 'patch' ? args : []), ...yes]);
      expect(result.code, `${noun} ${verb}: ${result.stderr}`).toBe(0);
      expect(result.stderr).toBe('');
      const printed = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(Object.keys(printed).sort(), `${noun} ${verb}`).toEqual(Object.keys(shape).sort());
      for (const [key, value] of Object.entries(shape)) {
        if (value === '<id>') expect(printed[key]).toBe(id);
        else if (value === '<fields>') expect(printed[key]).toEqual([expect.any(String)]);
        else expect(printed[key], `${noun} ${verb} ${key}`).toEqual(value);
      }
    }
  });
});
