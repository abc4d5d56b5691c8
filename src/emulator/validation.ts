import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { GIVEN_KEY_PATTERN, HTTP_URL_PATTERN, TOKEN_ID_PATTERN, TOKEN_ID_RULE } from '../api/patterns.js';
import { validationError } from './errors.js';

type DataValidationCxt = Parameters<ValidateFunction>[1];

const require = createRequire(import.meta.url);

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  // Loaded here, with the first schema compiled, not at start: ajv is a fifth of what a start loads.
  const { Ajv } = require('ajv') as typeof import('ajv');
  const formats = require('ajv-formats') as typeof import('ajv-formats');
  // validateSchema: false spares compiling the JSON Schema meta-schema at start (about 75 ms);
  // the schemas are our own and a test checks each against the meta-schema instead.
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    validateSchema: false,
  });
  formats.default(ajv, ['uuid', 'date-time', 'uri']);
  // RFC 3339 allows a leap second (23:59:60); a JavaScript Date cannot hold one, and an expiry
  // a second either way of it means nothing here: refused as the field's error, not met later as
  // an invalid date.
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => rfc3339.validate(value) && !Number.isNaN(Date.parse(value)),
  });
  return ajv;
}

/** A query integer as written: decimal digits, optionally negative (bounds are the schema's). */
const DIGITS = /^-?\d+$/;

/** The properties of a query schema that are integers (`page`, `size`). */
function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
}

/**
 * Coercion would read `1e3`, `0x10`, ` 5` and `5.0` as numbers: an integer in a query string
 * must be written in digits, or it is refused with the parameter's name.
 */
function malformedIntegers(query: unknown, names: string[]): ErrorObject[] {
  const errors: ErrorObject[] = [];
  for (const name of names) {
    const value = (query as Record<string, unknown> | null)?.[name];
    const written = Array.isArray(value) ? value : [value];
    if (value === undefined || written.every((item) => typeof item !== 'string' || DIGITS.test(item))) continue;
    errors.push({
      keyword: 'digits',
      instancePath: `/${name}`,
      schemaPath: `#/properties/${name}/type`,
      params: {},
      message: 'must be a whole number written in digits (e.g. 2)',
    });
  }
  return errors;
}

let ajvs: { body: Ajv; query: Ajv } | undefined;

/** Bodies are checked as sent (a number is not a string); query and path strings are coerced. */
function ajvFor(httpPart: string | undefined): Ajv {
  ajvs ??= { body: makeAjv(false), query: makeAjv('array') };
  return httpPart === 'body' ? ajvs.body : ajvs.query;
}

/**
 * Route schemas are compiled on first use, not when the route is registered: compiling all of
 * them was a third of the emulator's start, and most runs touch a few routes.
 */
export const schemaCompiler = ({ schema, httpPart }: { schema: unknown; httpPart?: string }) => {
  let compiled: ValidateFunction | undefined;
  const integers = httpPart === 'querystring' ? integerProperties(schema) : [];
  const validate = (data: unknown, context?: DataValidationCxt): boolean => {
    const malformed = integers.length > 0 ? malformedIntegers(data, integers) : [];
    if (httpPart === 'body') malformed.push(...oversized(schema, data));
    if (malformed.length > 0) {
      validate.errors = malformed;
      return false;
    }
    compiled ??= ajvFor(httpPart).compile(schema as object);
    const valid = compiled(data, context);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ErrorObject[] | null | undefined;
  // Marks a validator that takes the parent object, so that a root value can be coerced.
  validate.schemaEnv = true;
  return validate;
};

/** A route part's validator, called with the object holding the value, so that a root value can be coerced. */
export type RouteValidator = ((
  data: unknown,
  holder?: { parentData: object; parentDataProperty: string },
) => boolean) & {
  errors?: ErrorObject[] | null;
};

/** The validator of a route's `schema` part (http/request.ts). */
export function routeValidator(schema: object, httpPart: 'params' | 'body' | 'querystring'): RouteValidator {
  return schemaCompiler({ schema, httpPart }) as unknown as RouteValidator;
}

/**
 * A checker for values that arrive other than as HTTP bodies (req.svc calls from user code):
 * the same schema and messages as the HTTP route, as a 400 with field errors.
 */
export function bodyValidator<T>(schema: object): (value: unknown) => T {
  // Compiled on first use: most are for paths (req.svc, PATCH) a run may never take.
  let validate: ReturnType<Ajv['compile']> | undefined;
  return (value) => {
    const tooLarge = oversized(schema, value);
    if (tooLarge.length > 0) throw validationError(fieldErrors(tooLarge, 'body'));
    validate ??= ajvFor('body').compile(schema);
    if (!validate(value)) throw validationError(fieldErrors(validate.errors ?? [], 'body'));
    return value as T;
  };
}

/**
 * The arrays and objects over their schema's `maxItems` / `maxProperties`, found before ajv runs:
 * with `allErrors` it would go on to check every item of a million-item array (and report each
 * one that is wrong), where one error says it all. Follows `properties`, `items` (of an array
 * within its bound) and the branches of `anyOf` whose type fits the value (the API's schemas give
 * their branches distinct types), which is where the API's schemas put bounds.
 */
export function oversized(schema: unknown, data: unknown, at = ''): ErrorObject[] {
  if (typeof schema !== 'object' || schema === null || typeof data !== 'object' || data === null) return [];
  const rule = schema as BoundedSchema;
  if (Array.isArray(data)) {
    if (rule.maxItems !== undefined && data.length > rule.maxItems) return [tooMany('maxItems', rule.maxItems, at)];
    if (rule.items === undefined) return branches(rule, data, at);
    return data.flatMap((item, i) => oversized(rule.items, item, `${at}/${i}`)).concat(branches(rule, data, at));
  }
  if (rule.maxProperties !== undefined && hasMoreKeys(data, rule.maxProperties)) {
    return [tooMany('maxProperties', rule.maxProperties, at)];
  }
  const found: ErrorObject[] = [];
  for (const [name, property] of Object.entries(rule.properties ?? {})) {
    if (Object.hasOwn(data, name))
      found.push(...oversized(property, (data as Record<string, unknown>)[name], `${at}/${name}`));
  }
  return found.concat(branches(rule, data, at));
}

interface BoundedSchema {
  type?: string | string[];
  maxItems?: number;
  maxProperties?: number;
  items?: unknown;
  properties?: Record<string, unknown>;
  anyOf?: unknown[];
}

function branches(rule: BoundedSchema, data: object, at: string): ErrorObject[] {
  const kind = Array.isArray(data) ? 'array' : 'object';
  return (rule.anyOf ?? []).flatMap((branch) => {
    const type = (branch as BoundedSchema).type;
    return type === undefined || type === kind || (Array.isArray(type) && type.includes(kind))
      ? oversized(branch, data, at)
      : [];
  });
}

/** Whether `object` has more than `max` keys, counted no further than that. */
function hasMoreKeys(object: object, max: number): boolean {
  let count = 0;
  for (const _key in object) if (++count > max) return true;
  return false;
}

function tooMany(keyword: 'maxItems' | 'maxProperties', limit: number, at: string): ErrorObject {
  return {
    keyword,
    instancePath: at,
    schemaPath: `#/${keyword}`,
    params: { limit },
    message: keyword === 'maxItems' ? `must have at most ${limit} items` : `must have at most ${limit} fields`,
  };
}

/** Turns ajv's errors into field-level messages keyed by a readable path (`rules[0].priority`). */
export function fieldErrors(errors: ErrorObject[], part: string | undefined): Record<string, string[]> {
  // No prototype: a field named `constructor` or `toString` is a key like any other.
  const result: Record<string, string[]> = Object.create(null);
  for (const error of errors) {
    // `anyOf`/`oneOf` repeat what their branches already said.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    // A nullable field's `null` branch failing says nothing the other branch does not say better.
    if (
      error.keyword === 'type' &&
      (error.params as { type?: string }).type === 'null' &&
      error.schemaPath.includes('/anyOf/')
    )
      continue;
    const [field, message] = describe(error);
    const key = field || (part === 'body' ? 'body' : (part ?? 'request'));
    const messages = (result[key] ??= []);
    if (!messages.includes(message)) messages.push(message);
  }
  return result;
}

function describe(error: ErrorObject): [field: string, message: string] {
  const at = readablePath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const join = (name: unknown) => (at ? `${at}.${String(name)}` : String(name));
  switch (error.keyword) {
    case 'required':
      return [join(params.missingProperty), 'is required'];
    case 'additionalProperties':
      return [join(params.additionalProperty), 'is not a known field'];
    case 'type': {
      const type = String(params.type);
      if (!at && type === 'object') return ['', 'must be a JSON object'];
      return [at, `must be ${article(type)}`];
    }
    case 'enum':
      return [at, `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`];
    case 'format':
      return [at, FORMAT_MESSAGES[String(params.format)] ?? `must be a valid ${String(params.format)}`];
    case 'pattern':
      return [at, PATTERN_MESSAGES[String(params.pattern)] ?? 'is not in the expected form'];
    case 'maxLength':
      return [at, `must be at most ${String(params.limit)} characters`];
    case 'minLength':
      return [
        at,
        Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${String(params.limit)} characters`,
      ];
    case 'minItems':
      return [
        at,
        Number(params.limit) === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} items`,
      ];
    case 'maxItems':
      return [at, `must have at most ${String(params.limit)} items`];
    case 'maxProperties':
      return [at, `must have at most ${String(params.limit)} fields`];
    case 'minimum':
      return [at, `must be at least ${String(params.limit)}`];
    case 'maximum':
      return [at, `must be at most ${String(params.limit)}`];
    default:
      return [at, error.message ?? 'is invalid'];
  }
}

const PATTERN_MESSAGES: Record<string, string> = {
  [HTTP_URL_PATTERN]: 'must be an http or https URL',
  [TOKEN_ID_PATTERN]: TOKEN_ID_RULE,
  [GIVEN_KEY_PATTERN.source]: 'must be 16 to 256 letters, digits, "_", "-" or "."',
};

const FORMAT_MESSAGES: Record<string, string> = {
  uuid: 'must be a UUID',
  'date-time': 'must be an ISO 8601 date-time with a time zone and seconds 00-59 (e.g. 2030-01-01T00:00:00Z)',
  uri: 'must be an absolute URL',
};

function article(type: string): string {
  const names = type.split(',').map((t) => (t === 'integer' || t === 'object' || t === 'array' ? `an ${t}` : `a ${t}`));
  return names.join(' or ');
}

/** `/rules/0/priority` -> `rules[0].priority` */
function readablePath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment),
      '',
    );
}
