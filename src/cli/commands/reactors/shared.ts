import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import type { Reactor } from '../../../api/types.js';
import type { ApiClient } from '../../../client/index.js';
import { UsageError, UserError } from '../../errors.js';
import type { IO } from '../../io.js';
import type { Output } from '../../output.js';
import { resolveApplicationId } from '../applications/shared.js';
import { resolveByName } from '../../resolve.js';

export const reactorArg = { name: 'reactor', description: 'reactor id or exact name' };

export function resolveReactorId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.reactors.all(), 'reactor', 'svc reactors list');
}

export async function readCode(file: string, io: IO): Promise<string> {
  const resolved = path.resolve(io.cwd, file);
  try {
    return await readFile(resolved, 'utf8');
  } catch (error) {
    throw new UserError(`Cannot read the code file ${resolved}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`);
  }
}

/**
 * `--configuration` values: `KEY=VALUE` pairs, or `@file` naming a .env file (KEY=VALUE lines,
 * comments and quotes as dotenv reads them). Later values win.
 */
export async function readConfiguration(values: string[] | undefined, io: IO): Promise<Record<string, string> | undefined> {
  if (values === undefined) return undefined;
  const configuration: Record<string, string> = {};
  for (const value of values) {
    if (value.startsWith('@')) {
      const file = path.resolve(io.cwd, value.slice(1));
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new UserError(`Cannot read the configuration file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.`);
      }
      Object.assign(configuration, parseEnv(text));
      continue;
    }
    const at = value.indexOf('=');
    if (at <= 0) throw new UsageError(`--configuration takes KEY=VALUE or @file.env, not "${value}".`);
    configuration[value.slice(0, at)] = value.slice(at + 1);
  }
  return configuration;
}

/** `--application` by id or name (with the management key). */
export async function applicationRef(client: ApiClient, value: string | undefined): Promise<{ id: string } | undefined> {
  return value === undefined ? undefined : { id: await resolveApplicationId(client, value) };
}

export const reactorOptions = [
  { flags: '--name <name>', description: `name (up to ${MAX_NAME_LENGTH} characters)` },
  { flags: '--code <file>', description: 'file with the reactor code (CommonJS: module.exports = async function (req) {...})' },
  { flags: '--configuration <pair>', description: 'KEY=VALUE, or @file.env (repeatable)', repeatable: true },
  { flags: '--application <application>', description: 'Application (id or name) whose permissions req.svc gets' },
];

export async function showReactor(output: Output, reactor: Reactor): Promise<void> {
  const lines = reactor.code.replace(/\n$/, '').split('\n').length;
  await output.fields([
    ['id', reactor.id],
    ['name', reactor.name],
    ['application', reactor.application ? `${reactor.application.name} (${reactor.application.id})` : '(none)'],
    ['configuration', Object.keys(reactor.configuration).join(', ') || '(none)'],
    ['code', `${lines} line${lines === 1 ? '' : 's'}`],
    ['created', reactor.created_at],
    ['modified', reactor.modified_at],
  ]);
}
