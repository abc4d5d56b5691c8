/**
 * What `svc exec` puts in its command's environment: where the emulator listens, its bootstrap keys,
 * and a key per Application of svc.yaml, as `SVC_KEY_<NAME>`.
 */
import { UserError } from '../io/errors.js';

export interface ExecKeys {
  url: string;
  managementKey: string;
  apiKey: string;
  /** The key of each Application svc.yaml created, by its name. */
  applications: readonly { name: string; key: string }[];
}

/** `SVC_KEY_` and the name upper-cased, each character but A-Z and 0-9 as `_`: `my-app` -> `SVC_KEY_MY_APP`. */
export function keyVariable(name: string): string {
  return `SVC_KEY_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The variables of each Application's name; two names that make the same variable (`my-app` and
 * `my_app`) are an error rather than one key silently hiding the other.
 */
export function keyVariables(names: readonly string[]): Map<string, string> {
  const byVariable = new Map<string, string>();
  for (const name of names) {
    const variable = keyVariable(name);
    const other = byVariable.get(variable);
    if (other !== undefined) {
      throw new UserError(
        `The Applications ${other} and ${name} would both be given in ${variable}; rename one of them in svc.yaml.`,
      );
    }
    byVariable.set(variable, name);
  }
  return byVariable;
}

/** The command's environment: svc's own, with the emulator's URL and keys over it. */
export function execEnvironment(
  base: Record<string, string | undefined>,
  keys: ExecKeys,
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...base,
    SVC_BASE_URL: keys.url,
    SVC_MANAGEMENT_KEY: keys.managementKey,
    SVC_API_KEY: keys.apiKey,
  };
  for (const [variable, name] of keyVariables(keys.applications.map((app) => app.name))) {
    env[variable] = keys.applications.find((app) => app.name === name)?.key;
  }
  return env;
}
