/**
 * `svc apply --out plan.json`, then `svc apply plan.json`: a plan saved to be applied later,
 * exactly as it was shown. The file holds the plan (no key, no configuration value), the target,
 * and a salted digest of svc.yaml and of every file it names; applying it refuses when any of
 * them changed, or when the target no longer gives the same plan.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ApiClient } from '../client/index.js';
import { sameValue } from './compare.js';
import { changeDocument, type ChangeDocument } from './document.js';
import { ApplyError } from './errors.js';
import { isRecord } from '../lib/is-record.js';
import { writeFileDurably } from '../lib/durable-file.js';
import { readJsonFile } from './files.js';
import { loadConfig } from './load.js';
import { prepareFor, type PreparedApply } from './session.js';
import { displayPath, sha256 } from './sources.js';
import type { Address, Desired, Plan } from './types.js';

interface PlanFileDocument {
  svc_plan: 1;
  created_at: string;
  /** svc.yaml, relative to the plan file's folder. */
  config: string;
  target: { url: string; tenant_id: string };
  options: { prune: boolean; targets?: Address[] };
  salt: string;
  /** Salted digests of svc.yaml and every file it names, by path relative to svc.yaml. */
  files: Record<string, string>;
  /** The plan, its changes snake_case (document.ts); a file of an svc before that has `dependsOn`, read as well. */
  plan: Omit<Plan, 'changes'> & { changes: ChangeDocument[] };
}

export async function writePlanFile(file: string, prepared: PreparedApply, now: Date): Promise<void> {
  const salt = randomBytes(16).toString('hex');
  const { targets } = prepared.options;
  const document: PlanFileDocument = {
    svc_plan: 1,
    created_at: now.toISOString(),
    config: path.relative(path.dirname(path.resolve(file)), prepared.desired.files[0]!.absolute),
    target: { url: prepared.target.url, tenant_id: prepared.target.tenantId },
    options: { prune: prepared.options.prune ?? false, ...(targets && { targets }) },
    salt,
    files: digests(prepared.desired, salt),
    plan: { ...prepared.plan, changes: prepared.plan.changes.map(changeDocument) },
  };
  await writeFileDurably(path.resolve(file), `${JSON.stringify(document, null, 2)}\n`, 0o644);
}

/**
 * Prepares the apply of a saved plan: refuses (an ApplyError saying why) when svc.yaml or a file
 * it names changed, when the client points at another target, or when planning again now gives
 * another plan (the target changed meanwhile). What it returns applies exactly the saved plan.
 */
export async function prepareFromPlanFile(
  file: string,
  options: {
    client: ApiClient;
    cwd: string;
    env: Record<string, string | undefined>;
    allowOutsideProject?: boolean;
  },
): Promise<PreparedApply> {
  const absolute = path.resolve(options.cwd, file);
  const shown = displayPath(absolute, options.cwd);
  const document = await readPlanFile(absolute, shown);
  const config = path.resolve(path.dirname(absolute), document.config);
  let desired: Desired;
  try {
    const { cwd, env, allowOutsideProject } = options;
    desired = await loadConfig(config, { cwd, env, ...(allowOutsideProject && { allowOutsideProject }) });
  } catch (error) {
    if (error instanceof ApplyError) throw new ApplyError(`The plan ${shown} cannot be applied: ${error.message}`);
    throw error;
  }
  const now = digests(desired, document.salt);
  const names = new Set([...Object.keys(now), ...Object.keys(document.files)]);
  const changed = [...names].filter((name) => now[name] !== document.files[name]);
  const remake = `make a new plan (svc apply --out ${shown})`;
  if (changed.length > 0)
    throw new ApplyError(`${changed.join(', ')} changed since the plan ${shown} was made; ${remake}.`);
  const { prune, targets } = document.options;
  const prepared = await prepareFor(desired, { client: options.client, prune, ...(targets && { targets }) });
  const { url, tenantId } = prepared.target;
  const refuse = async (message: string) => {
    await prepared.release();
    return new ApplyError(message);
  };
  if (url !== document.target.url || tenantId !== document.target.tenant_id) {
    const planned = `${document.target.url} (tenant ${document.target.tenant_id})`;
    throw await refuse(`The plan ${shown} was made for ${planned}, not ${url} (tenant ${tenantId}).`);
  }
  if (!sameValue(prepared.plan.changes.map(changeDocument), document.plan.changes.map(snakeChange))) {
    throw await refuse(`The target changed since the plan ${shown} was made; ${remake}.`);
  }
  return prepared;
}

async function readPlanFile(absolute: string, shown: string): Promise<PlanFileDocument> {
  const invalid = (reason: string) =>
    new ApplyError(
      `${shown} is not a plan made by \`svc apply --out\` (${reason}); to apply a config, give it with -f.`,
    );
  const value = await readJsonFile(absolute, invalid);
  if (value === undefined) throw new ApplyError(`Cannot read the plan ${shown}: no such file.`);
  if (!isRecord(value) || value.svc_plan !== 1) throw invalid('no "svc_plan": 1');
  const target = value.target;
  const plan = value.plan;
  if (typeof value.config !== 'string' || typeof value.salt !== 'string' || !isRecord(value.files)) {
    throw invalid('it lacks config, salt or files');
  }
  if (!isRecord(plan) || !Array.isArray(plan.changes)) {
    throw invalid('it lacks its plan');
  }
  const targetOk = isRecord(target) && typeof target.url === 'string' && typeof target.tenant_id === 'string';
  if (!targetOk || !isRecord(value.options)) {
    throw invalid('it lacks its target or options');
  }
  return value as unknown as PlanFileDocument;
}

/** A saved change as this svc writes it: a plan file of an svc before it has `dependsOn`. */
function snakeChange(change: ChangeDocument | (Omit<ChangeDocument, 'depends_on'> & { dependsOn?: string[] })) {
  if (!('dependsOn' in change)) return change;
  const { dependsOn, ...rest } = change;
  return { ...rest, depends_on: dependsOn ?? [] };
}

/** Each file's digest, salted so that the plan file holds nothing to test a guessed value against. */
function digests(desired: Desired, salt: string): Record<string, string> {
  return Object.fromEntries(desired.files.map((file) => [file.path, sha256(`${salt}:${file.digest}`)]));
}
