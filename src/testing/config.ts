import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { applyToFreshTarget, loadConfig, type Desired } from '../apply/index.js';
import type { ApiClient } from '../client/index.js';

/** svc.yaml: a path to it (relative to `projectDir`), or the same document as an object. */
export type SvcConfig = string | Record<string, unknown>;

/**
 * Loads svc.yaml with the apply engine's loader (the same checks and messages as `svc apply`). A
 * document given as an object is written to a temporary file first, the files it names resolved
 * from `projectDir`: nothing is written in the project.
 */
export async function loadSvcConfig(config: SvcConfig, projectDir: string): Promise<Desired> {
  const env = { ...process.env };
  if (typeof config === 'string') return loadConfig(config, { cwd: projectDir, env });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-testing-'));
  try {
    const file = path.join(dir, 'svc.json');
    await writeFile(file, JSON.stringify(withAbsolutePaths(config, projectDir)));
    return await loadConfig(file, { cwd: projectDir, env, allowOutsideProject: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Applies svc.yaml to the tenant `client` manages, as `svc apply` plans and executes it, but with
 * no state or keys file: the template is new, and every fork gets keys of its own.
 */
export async function applyToTemplate(desired: Desired, client: ApiClient): Promise<void> {
  const execution = await applyToFreshTarget(desired, client);
  const failed = execution.outcomes.filter((outcome) => outcome.status === 'failed');
  if (failed.length > 0) {
    const lines = failed.map((outcome) => `  ${outcome.address}: ${outcome.error ?? 'failed'}`);
    throw new Error(`svc/testing could not apply ${desired.file}:\n${lines.join('\n')}`);
  }
}

/** The document with the files it names (code, .env) made absolute from `projectDir`. */
function withAbsolutePaths(config: Record<string, unknown>, projectDir: string): Record<string, unknown> {
  const resolve = (value: unknown) => (typeof value === 'string' ? path.resolve(projectDir, value) : value);
  const section = (name: string, fields: string[]) => {
    const entries = config[name];
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) return entries;
    return Object.fromEntries(
      Object.entries(entries).map(([key, entry]) => {
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return [key, entry];
        const copy: Record<string, unknown> = { ...entry };
        for (const field of fields) if (field in copy) copy[field] = resolve(copy[field]);
        return [key, copy];
      }),
    );
  };
  return {
    ...config,
    ...(config.reactors !== undefined && { reactors: section('reactors', ['code', 'configuration']) }),
    ...(config.proxies !== undefined && {
      proxies: section('proxies', ['request_transform', 'response_transform', 'configuration']),
    }),
  };
}
