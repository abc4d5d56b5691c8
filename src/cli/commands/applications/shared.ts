import { ALL_PERMISSIONS } from '../../../api/permissions.js';
import type { AccessRule, Application } from '../../../api/types.js';
import type { ApiClient } from '../../../client/index.js';
import { UsageError } from '../../errors.js';
import { resolveByName } from '../../resolve.js';
import type { Output } from '../../output.js';

export const applicationArg = { name: 'application', description: 'Application id or exact name' };

/** An id is used as it is; a name is looked up (with the management key) and must be unique. */
export function resolveApplicationId(client: ApiClient, idOrName: string): Promise<string> {
  return resolveByName(idOrName, () => client.applications.all(), 'Application', 'svc applications list');
}

/** `--rule` takes one access rule as JSON (an object), or several (an array); repeatable. */
export function parseRules(values: string[] | undefined): AccessRule[] | undefined {
  if (values === undefined) return undefined;
  return values.flatMap((value) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new UsageError(`--rule must be JSON, e.g. '{"priority":1,"container":"/pci/","transform":"mask","permissions":["token:read"]}' (${(error as Error).message}).`);
    }
    if (Array.isArray(parsed)) return parsed as AccessRule[];
    if (typeof parsed === 'object' && parsed !== null) return [parsed as AccessRule];
    throw new UsageError('--rule must be a JSON object (one rule) or an array of rules.');
  });
}

/** One Application for people; the key, when present, with the warning that it is shown once. */
export async function showApplication(output: Output, app: Application): Promise<void> {
  const rules = app.rules.map((rule) => `${rule.priority}: ${rule.container ?? '(conditions)'} ${rule.transform} [${rule.permissions.join(', ')}]`);
  await output.fields([
    ['id', app.id],
    ['name', app.name],
    ['type', app.type],
    ['permissions', app.permissions.join(', ') || '(none)'],
    ['rules', rules.length ? rules.join('\n') : '(none)'],
    ['created', app.created_at ?? ''],
    ['modified', app.modified_at ?? ''],
    ['expires', app.expires_at ?? 'never'],
    ...(app.key ? ([['key', app.key]] as [string, string][]) : []),
  ]);
  if (app.key) output.note('Store this key now: it is not shown again (`svc applications regenerate` issues a new one).');
}

/** Every permission of a noun, as the API knows them. */
const VERBS_OF = new Map<string, string[]>();
for (const permission of ALL_PERMISSIONS) {
  const [noun = '', verb = ''] = permission.split(':');
  VERBS_OF.set(noun, [...(VERBS_OF.get(noun) ?? []), verb]);
}

/** `application:*,token:read`: every permission of a noun reads as `noun:*`. */
export function summarizePermissions(permissions: string[]): string {
  const byNoun = new Map<string, string[]>();
  for (const permission of permissions) {
    const [noun = permission, verb = ''] = permission.split(':');
    byNoun.set(noun, [...(byNoun.get(noun) ?? []), verb]);
  }
  return [...byNoun.entries()]
    .flatMap(([noun, verbs]) => {
      const all = VERBS_OF.get(noun);
      return all?.every((verb) => verbs.includes(verb)) ? [`${noun}:*`] : verbs.map((verb) => `${noun}:${verb}`);
    })
    .join(',');
}
