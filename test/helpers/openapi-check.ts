/**
 * Every answer the test suite gets from an emulator, checked against the OpenAPI document made
 * from the same route table (src/emulator/http/openapi): its status listed for the operation, its
 * body valid against the schema of that status and content type. A mismatch is kept, and what a
 * test file checked is written to $TMPDIR/svc-openapi-check/<pid>-<random>.json when it ends.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { openApiDocument, type OpenApiDocument, type Operation } from '../../src/emulator/http/openapi/document.js';
import { routes } from '../../src/emulator/http/routes/index.js';

const require = createRequire(import.meta.url);

/** Where each worker writes what it checked: `{ checked, mismatches: [...] }`. */
export const CHECK_REPORT_DIR = path.join(os.tmpdir(), 'svc-openapi-check');

export interface Answered {
  method: string;
  url: string;
  status: number;
  contentType: string | undefined;
  /** The body's text; undefined when it was not read (a stream). */
  text: string | undefined;
  /** A proxy's answer from its destination (it carries SVC-PROXY-DESTINATION-STATUS), not the proxy's own. */
  fromDestination?: boolean;
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

let document: OpenApiDocument | undefined;
let validators: Map<object, Validate> | undefined;
interface AjvLike {
  compile(schema: object): Validate;
  addSchema(schema: object): unknown;
}
let ajv: AjvLike | undefined;
const origins = new Set<string>();
const counts = { checked: 0, mismatches: [] as string[] };
/** This module's report file: one per test file (vitest evaluates the helpers anew for each). */
const reportName = `${process.pid}-${randomBytes(4).toString('hex')}.json`;

/** The document the answers are checked against (made once per worker). */
export function checkedDocument(): OpenApiDocument {
  document ??= openApiDocument(routes, 'test');
  return document;
}

/** Answers from this origin (an emulator the helpers started) are checked. */
export function checkAnswersOf(url: string): void {
  origins.add(new URL(url).origin);
}

/** Writes what this test file checked to CHECK_REPORT_DIR (when it checked anything). */
export function writeCheckReport(): void {
  if (counts.checked === 0) return;
  mkdirSync(CHECK_REPORT_DIR, { recursive: true });
  writeFileSync(path.join(CHECK_REPORT_DIR, reportName), JSON.stringify(counts));
}

/** Whether answers from `url` are checked. */
export function isChecked(url: string): boolean {
  try {
    return origins.has(new URL(url).origin);
  } catch {
    return false;
  }
}

function validatorOf(schema: object): Validate {
  if (ajv === undefined) {
    const Ajv2020 = require('ajv/dist/2020').default;
    const formats = require('ajv-formats');
    const made: AjvLike = new Ajv2020({ strict: false, allErrors: true });
    formats(made);
    ajv = made;
    made.addSchema({ $id: 'https://svc.invalid/openapi.json', components: checkedDocument().components });
    validators = new Map();
  }
  let validate = validators!.get(schema);
  if (validate === undefined) {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"https://svc.invalid/openapi.json#/components/');
    validate = ajv!.compile(JSON.parse(text));
    validators!.set(schema, validate);
  }
  return validate;
}

/** The operation of a method and path, as the router finds it: static segments before parameters. */
export function operationOf(method: string, pathname: string): { template: string; operation: Operation } | undefined {
  const doc = checkedDocument();
  const templates = Object.keys(doc.paths).sort(
    (a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0),
  );
  for (const template of templates) {
    const pattern = template
      .split('/')
      .map((part) =>
        part === '{path}' ? '.+' : part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    if (!new RegExp(`^${pattern}$`).test(pathname)) continue;
    const operation = doc.paths[template]?.[method.toLowerCase()];
    return operation === undefined ? undefined : { template, operation };
  }
  return undefined;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/** A response, or the shared one its `$ref` names (components.responses). */
function resolved(response: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const ref = response?.$ref;
  if (typeof ref !== 'string') return response;
  const shared = (checkedDocument().components as { responses: Record<string, Record<string, unknown>> }).responses;
  return shared[ref.replace('#/components/responses/', '')];
}

/** What is wrong with an answer, or undefined when the document describes it. */
export function mismatchOf(answer: Answered): string | undefined {
  const url = new URL(answer.url);
  const said = `${answer.method} ${url.pathname} -> ${answer.status}`;
  return unexplained(said, answer) ?? documentMismatch(said, answer, url);
}

/**
 * Issue 30: every 401 and 403 the emulator answers says why (its problem's `explanation`, inside
 * `proxy_error` on /proxy). A destination's answer, or user code's own (not a problem document), is not
 * the emulator's refusal.
 */
function unexplained(said: string, answer: Answered): string | undefined {
  if (answer.fromDestination || (answer.status !== 401 && answer.status !== 403) || answer.text === undefined) return;
  const type = answer.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/problem+json' && type !== 'application/json') return;
  let body: { explanation?: unknown; proxy_error?: { explanation?: unknown }; type?: unknown };
  try {
    body = JSON.parse(answer.text);
  } catch {
    return;
  }
  const problem = body.proxy_error ?? body;
  if (typeof (problem as { type?: unknown }).type !== 'string') return;
  return typeof problem.explanation === 'object' && problem.explanation !== null
    ? undefined
    : `${said}: a refusal without an explanation`;
}

function documentMismatch(said: string, answer: Answered, url: URL): string | undefined {
  // One trailing slash names the same route as the router finds it (but a proxy call's, which is the caller's path).
  const trimmed =
    url.pathname.length > 1 && url.pathname.endsWith('/') && !url.pathname.startsWith('/proxy')
      ? url.pathname.slice(0, -1)
      : url.pathname;
  const found = operationOf(answer.method, url.pathname) ?? operationOf(answer.method, trimmed);
  const type = answer.contentType?.split(';')[0]?.trim().toLowerCase();
  if (found === undefined) {
    // No operation: the answer is the 404, 405 or refusal of the router, a problem (a proxy_error on /proxy).
    if (answer.status < 400) return `${said}: no operation, yet not an error`;
    return bodyMismatch(said, answer, type, url.pathname.startsWith('/proxy') ? 'ProxyError' : 'Problem');
  }
  const responses = found.operation.responses;
  const listed = resolved(responses[String(answer.status)]);
  const fallback = responses.default;
  const response = (answer.fromDestination && fallback) || listed || fallback;
  if (response === undefined) return `${said}: status not listed for ${answer.method} ${found.template}`;
  if (answer.method === 'HEAD' || answer.text === undefined) return undefined;
  const content = (response.content ?? {}) as Record<string, { schema?: object }>;
  const other = (fallback?.content ?? {}) as Record<string, { schema?: object }>;
  const media =
    (type !== undefined && content[type]) || content['*/*'] || (type !== undefined && other[type]) || other['*/*'];
  if (!media) {
    if (answer.text === '' && Object.keys(content).length === 0) return undefined;
    return `${said}: content type ${type ?? '(none)'} not listed for ${answer.method} ${found.template}`;
  }
  // An empty schema (a destination's answer, a reactor's custom response) takes any bytes.
  if (
    type === undefined ||
    !JSON_TYPE.test(type) ||
    media.schema === undefined ||
    Object.keys(media.schema).length === 0
  )
    return undefined;
  return validBody(said, answer.text, media.schema);
}

function bodyMismatch(said: string, answer: Answered, type: string | undefined, schema: string): string | undefined {
  if (answer.method === 'HEAD' || answer.text === undefined) return undefined;
  if (type === undefined || !JSON_TYPE.test(type)) return `${said}: an error answer of type ${type ?? '(none)'}`;
  return validBody(said, answer.text, { $ref: `#/components/schemas/${schema}` });
}

const refs = new Map<string, object>();

function validBody(said: string, text: string, schema: object): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${said}: the body is not JSON`;
  }
  // One object per $ref, so that its validator is compiled once.
  const key = '$ref' in schema ? String(schema.$ref) : undefined;
  const shared = key === undefined ? schema : (refs.get(key) ?? refs.set(key, schema).get(key)!);
  const validate = validatorOf(shared);
  if (validate(body)) return undefined;
  return `${said}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${text.slice(0, 300)}`;
}

/** Checks an answer from a checked origin; returns the mismatch (also kept for the report). */
export function checkAnswer(answer: Answered): string | undefined {
  if (!isChecked(answer.url)) return undefined;
  counts.checked++;
  const mismatch = mismatchOf(answer);
  if (mismatch !== undefined) counts.mismatches.push(mismatch);
  return mismatch;
}

/** The mismatches found so far by this worker, and how many answers were checked. */
export function checkCounts(): { checked: number; mismatches: readonly string[] } {
  return counts;
}
