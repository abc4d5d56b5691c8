import type { YamlPath } from './locate.js';

/** `${env:NAME}`, `$${` (a literal `${`), or any other `${` (a mistake worth naming). */
const PATTERN = /\$\$\{|\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\$\{[^}]*\}?/g;

type Env = Record<string, string | undefined>;

export interface InterpolationIssue {
  path: YamlPath;
  message: string;
}

/**
 * Replaces `${env:NAME}` in every string value of `value` (pure: `env` is passed in). A variable
 * that is not set, and a `${...}` that is not `${env:NAME}`, are issues at their path; `$${`
 * stands for a literal `${`. Keys are left as they are: they are names.
 */
export function interpolate(value: unknown, env: Env, issues: InterpolationIssue[], path: YamlPath = []): unknown {
  if (typeof value === 'string') return interpolateString(value, env, issues, path);
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, issues, [...path, i]));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, item]) => [key, interpolate(item, env, issues, [...path, key])]);
    return Object.fromEntries(entries);
  }
  return value;
}

function interpolateString(text: string, env: Env, issues: InterpolationIssue[], path: YamlPath): string {
  if (!text.includes('${')) return text;
  return text.replace(PATTERN, (match, name: string | undefined) => {
    if (match === '$${') return '${';
    if (name === undefined) {
      issues.push({ path, message: `${match} is not \${env:NAME} (write $\${ for a literal \${)` });
      return match;
    }
    const found = env[name];
    if (found === undefined) {
      issues.push({ path, message: `the environment variable ${name} is not set (\${env:${name}})` });
      return match;
    }
    return found;
  });
}
