import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * The JSON Schema of svc.yaml. It ships in the package (templates/, listed in `files`) for
 * editors, and the loader validates with this very file, so the two never disagree. From
 * dist/apply/ and from src/apply/ alike it is two folders up.
 */
export const SCHEMA_FILE = fileURLToPath(new URL('../../templates/svc.schema.json', import.meta.url));

let compiled: ValidateFunction | undefined;

/** The compiled validator, made on first use (no work on import). */
export function schemaValidator(): ValidateFunction {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as object;
  // allErrors: every unknown key and wrong type is reported, each at its own line; verbose: errors
  // carry their parent schema, so an unknown key's message can list the known ones.
  compiled = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, verbose: true }).compile(schema);
  return compiled;
}

/** One schema problem: where (a path of keys and indexes) and what, in words for svc.yaml's authors. */
export interface SchemaIssue {
  path: (string | number)[];
  /** The problem is the key at `path` itself (an unknown key), not its value. */
  atKey: boolean;
  message: string;
}

/** Turns ajv's errors into issues: one per place, the most telling one first. */
export function schemaIssues(errors: ErrorObject[] | null | undefined): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
    const issue = describe(error, path);
    if (!issue) continue;
    const key = issue.path.join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function describe(error: ErrorObject, path: (string | number)[]): SchemaIssue | undefined {
  const params = error.params as Record<string, unknown>;
  const section = path.length === 2 && typeof path[0] === 'string' ? path[0] : undefined;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { path: [...path, key], atKey: true, message: `unknown key "${key}"${known(error)}` };
    }
    case 'propertyNames':
      return undefined; // reported by the nested error on the name itself
    case 'required':
      return { path, atKey: false, message: `missing "${String(params.missingProperty)}"` };
    case 'type': {
      // A configuration value is a string; `PORT: 8080` is a number to YAML.
      const quote = path[path.length - 2] === 'configuration' && params.type === 'string' ? ' (put it in quotes)' : '';
      const what = section ? ` (a ${singular(section)})` : '';
      return { path, atKey: false, message: `must be ${typeWords(String(params.type))}${what}${quote}` };
    }
    case 'enum':
      return { path, atKey: false, message: `must be one of ${(params.allowedValues as unknown[]).join(', ')}` };
    case 'pattern':
      return { path, atKey: false, message: patternWords(path) };
    case 'minLength': {
      const message =
        params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} characters`;
      return { path, atKey: path.length === 2, message };
    }
    case 'maxLength':
      return { path, atKey: path.length === 2, message: `must have at most ${String(params.limit)} characters` };
    case 'minimum':
      return { path, atKey: false, message: `must be ${String(params.limit)} or more` };
    case 'minItems': {
      const items = `item${params.limit === 1 ? '' : 's'}`;
      return { path, atKey: false, message: `must have at least ${String(params.limit)} ${items}` };
    }
    case 'maxItems':
    case 'maxProperties':
      return { path, atKey: false, message: `must have at most ${String(params.limit)} entries` };
    default:
      return { path, atKey: false, message: error.message ?? 'is not valid' };
  }
}

/** "(known: a, b)" from the schema's own list of properties. */
function known(error: ErrorObject): string {
  const properties = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  const names = Object.keys(properties ?? {}).filter((name) => name !== '$schema');
  return names.length > 0 ? ` (known: ${names.join(', ')})` : '';
}

function typeWords(type: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    boolean: 'true or false',
    integer: 'a whole number',
    array: 'a list',
    object: 'a map of keys',
  };
  return type
    .split(',')
    .map((part) => words[part] ?? part)
    .join(' or ')
    .replace('a map of keys or a string', 'a map of KEY: value strings or the path of a .env file');
}

function patternWords(path: (string | number)[]): string {
  const field = path[path.length - 1];
  if (field === 'destination_url') return 'must be an http:// or https:// URL';
  if (field === 'container') {
    return 'must start and end with "/" with letters, digits, "-" and "_" between slashes (e.g. /pci/high/)';
  }
  return 'is not in the expected form';
}

function singular(section: string): string {
  return section === 'proxies' ? 'proxy' : section.slice(0, -1);
}
