import { ALL_PERMISSIONS } from '../../../api/permissions.js';
import type { AccessRule, Application } from '../../../api/types.js';
import type { ApiClient } from '../../../client/index.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { parseRules } from '../../../requests/applications.js';
import { readInput } from '../../io/input.js';
import type { IO } from '../../io/process.js';
import type { Output } from '../../io/output.js';

export const applicationArg = { name: 'application', description: 'Application id or exact name' } as const;

/** `--application X` as its id, `--no-application` as null (unbind), neither as undefined (no change). */
export async function applicationFlag(
  client: ApiClient,
  value: string | false | undefined,
): Promise<string | null | undefined> {
  if (value === undefined) return undefined;
  return value === false ? null : resolveApplicationId(client, value);
}

/** `--rule` values (JSON, @file or - for stdin, each one rule or an array) as the rules they hold. */
export async function readRules(values: string[] | undefined, io: IO): Promise<AccessRule[] | undefined> {
  if (values === undefined) return undefined;
  const texts: string[] = [];
  for (const value of values) texts.push((await readInput(value, io, '--rule')) ?? '');
  return parseRules(texts, '--rule');
}

/** One Application for people; the key, when present, with the warning that it is shown once; `extra` rows last. */
export async function showApplication(output: Output, app: Application, extra: [string, string][] = []): Promise<void> {
  const rules = app.rules.map(
    (rule) =>
      `${rule.priority}: ${rule.container ?? '(conditions)'} ${rule.transform} [${rule.permissions.join(', ')}]`,
  );
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
    ...extra,
  ]);
  if (app.key)
    output.note('Store this key now: it is not shown again (`svc applications regenerate` issues a new one).');
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
