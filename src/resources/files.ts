import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnvText, parsePair } from './configuration.js';
import { UnreadableFileError } from './errors.js';

/**
 * The file reading that building a resource needs, apart from the pure bodies. Relative paths are taken
 * from `baseDir`: the working directory for the CLI, the folder of svc.yaml for `svc apply`.
 */

/** The text of a code file (a reactor, a proxy transform). */
export function readCodeFile(file: string, baseDir: string): Promise<string> {
  return readText(path.resolve(baseDir, file), 'code');
}

/** A `.env` file as a configuration map. */
export async function readEnvFile(file: string, baseDir: string): Promise<Record<string, string>> {
  return parseEnvText(await readText(path.resolve(baseDir, file), 'configuration'));
}

/**
 * Configuration from `KEY=VALUE` pairs and `@file.env` names, in order, later values winning;
 * `undefined` when none are given (so an update keeps the current configuration).
 */
export async function readConfiguration(
  values: readonly string[] | undefined,
  baseDir: string,
  label: string,
): Promise<Record<string, string> | undefined> {
  if (values === undefined) return undefined;
  const configuration: Record<string, string> = {};
  for (const value of values) {
    if (value.startsWith('@')) {
      Object.assign(configuration, await readEnvFile(value.slice(1), baseDir));
      continue;
    }
    const [key, text] = parsePair(value, label, 'KEY=VALUE or @file.env');
    configuration[key] = text;
  }
  return configuration;
}

async function readText(file: string, role: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UnreadableFileError(file, role, error);
  }
}
