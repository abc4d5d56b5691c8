/**
 * The OpenAPI 3.1 document of the API as the emulator implements it, read off the route table
 * (routes/index.ts): the same declarations and JSON Schemas the server routes and validates with,
 * so that it cannot drift from them. Served at GET /_emulator/openapi.json and written to
 * dist/openapi.json by the build (src/emulator/http/openapi/write.ts).
 */
import {
  API_KEY_HEADER,
  JSON_CONTENT_TYPE,
  MERGE_PATCH_CONTENT_TYPE,
  PROBLEM_CONTENT_TYPE,
  PROXY_KEY_HEADER,
  PROXY_KEY_QUERY,
  TRACE_HEADER,
  TRANSACTION_HEADER,
} from '../../../api/headers.js';
import { DEFAULT_BASE_URL } from '../../../api/defaults.js';
import { problemDefaults } from '../../../api/problem.js';
import type { Method, Route, RouteResponse } from '../route.js';
import { componentSchemas, referenced } from './components.js';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Operation>> };
export type Operation = Record<string, unknown> & {
  operationId: string;
  summary: string;
  responses: Record<string, Record<string, unknown>>;
};

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };
const PROXY_ERROR_REF = { $ref: '#/components/schemas/ProxyError' };
const TRACE_HEADERS = { [TRACE_HEADER.toUpperCase()]: { $ref: '#/components/headers/TraceId' } };

/** `/applications/:id` -> `/applications/{id}`; a last `*` (the rest of the path) -> `{path}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
}

/**
 * The problem statuses a route may answer: those of every request (a missing Host, a body that
 * cannot be read, a timeout, an Expect svc cannot meet, an internal error, the start), of its kind (a key, a body, an id in
 * the path) and its own.
 */
export function problemStatuses(route: Route, method: Method): number[] {
  // 417: an Expect other than 100-continue, on any request (http/front.ts).
  const statuses = new Set([400, 408, 417, 431, 500, 503, ...(route.problems ?? [])]);
  if (!route.public || route.proxy) statuses.add(401).add(403);
  if (route.admin) statuses.add(403);
  if (method !== 'GET') statuses.add(413).add(415).add(507);
  if (route.path.includes(':') || route.path.includes('*') || route.proxy) statuses.add(404).add(414);
  return [...statuses].sort((a, b) => a - b);
}

function response(answer: RouteResponse): Record<string, unknown> {
  const content =
    answer.schema === undefined && answer.contentType === undefined
      ? undefined
      : { [answer.contentType ?? JSON_CONTENT_TYPE]: { schema: referenced(answer.schema ?? {}) } };
  return { description: answer.description, headers: TRACE_HEADERS, ...(content && { content }) };
}

function problemContent(proxy: boolean): Record<string, unknown> {
  return proxy
    ? { [JSON_CONTENT_TYPE]: { schema: PROXY_ERROR_REF } }
    : { [PROBLEM_CONTENT_TYPE]: { schema: PROBLEM_REF } };
}

/** `Problem404`, or `ProxyError404` on /proxy: the shared response of an error status. */
function problemName(route: Route, status: number): string {
  return `${route.proxy ? 'ProxyError' : 'Problem'}${status}`;
}

/** `components.responses`: each error status's problem answer that the operations name. */
function problemResponses(routes: readonly Route[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const route of routes) {
    for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
      for (const status of problemStatuses(route, method)) {
        out[problemName(route, status)] ??= {
          description: problemDefaults(status).title,
          headers: TRACE_HEADERS,
          content: problemContent(route.proxy === true),
        };
      }
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function responses(route: Route, method: Method): Operation['responses'] {
  const out: Operation['responses'] = {};
  for (const [status, answer] of Object.entries(route.responses ?? {})) {
    if (status !== 'default' && answer) out[status] = response(answer);
  }
  if (Object.keys(out).length === 0) out['200'] = { description: 'Done.', headers: TRACE_HEADERS };
  for (const status of problemStatuses(route, method)) {
    const given = out[String(status)];
    if (given === undefined) out[String(status)] = { $ref: `#/components/responses/${problemName(route, status)}` };
    else given.content = { ...(given.content as object), ...problemContent(route.proxy === true) };
  }
  const otherwise = route.responses?.default;
  if (otherwise) out.default = response(otherwise);
  return out;
}

function parameters(route: Route): object[] {
  const params = (route.schema?.params ?? {}) as { properties?: Record<string, object> };
  const path = Object.entries(params.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'path',
    required: true,
    schema: referenced(schema),
  }));
  if (route.path.endsWith('*'))
    path.push({
      name: 'path',
      in: 'path',
      required: true,
      description: "The rest of the path, '/' included: appended to the proxy's destination.",
      schema: { type: 'string' },
    } as never);
  const query = route.schema?.querystring as { properties?: Record<string, object>; required?: string[] } | undefined;
  const queries = Object.entries(query?.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: query?.required?.includes(name) ?? false,
    ...((schema as { type?: string }).type === 'integer' && {
      description: 'Written in decimal digits (1e3, 0x10 and 5.0 are refused).',
    }),
    ...((schema as { type?: string }).type === 'array' && { style: 'form', explode: true }),
    schema: referenced(schema),
  }));
  const transactional = route.path.startsWith('/tokens') || route.path === '/tokenize';
  return [...path, ...queries, ...(transactional ? [{ $ref: '#/components/parameters/TransactionId' }] : [])];
}

function requestBody(route: Route, method: Method): object | undefined {
  if (route.proxy) {
    return method === 'GET'
      ? undefined
      : { description: 'Any bytes, forwarded with their Content-Type.', content: { '*/*': { schema: {} } } };
  }
  if (method === 'PATCH') {
    return {
      required: true,
      description: 'A JSON merge patch (RFC 7396) of the resource as PUT takes it.',
      content: { [MERGE_PATCH_CONTENT_TYPE]: { schema: { type: 'object' } } },
    };
  }
  const schema = route.schema?.body;
  if (schema === undefined && route.jsonBody === undefined) return undefined;
  const nullable = JSON.stringify(schema ?? {}).startsWith('{"anyOf":[{"type":"null"}');
  return {
    required: !nullable,
    ...(route.jsonBody !== undefined && { description: route.jsonBody }),
    content: { [JSON_CONTENT_TYPE]: { schema: referenced(schema ?? {}) } },
  };
}

function security(route: Route): object[] | undefined {
  if (route.proxy)
    return [{ ProxyKey: [] }, { ProxyKeyQuery: [] }, { ProxyKey: [], ApiKey: [] }, { ProxyKeyQuery: [], ApiKey: [] }];
  return route.public ? [] : undefined;
}

function description(route: Route): string | undefined {
  const lines = [
    route.permission && `Needs the permission \`${route.permission}\`.`,
    route.admin &&
      'Emulator admin route: answers loopback callers only, for a loopback Host, not through a proxy and not to a browser page of another site.',
    !route.public &&
      !route.permission &&
      !route.admin &&
      'Any key of the tenant; access to tokens is decided per token by the access rules.',
    route.method === 'GET' || (Array.isArray(route.method) && route.method.includes('GET'))
      ? route.proxy
        ? undefined
        : 'Answers HEAD too (its headers only).'
      : undefined,
  ].filter(Boolean);
  return lines.length > 0 ? lines.join(' ') : undefined;
}

function operation(route: Route, method: Method): Operation {
  const tag = route.path.split('/')[1]?.replace(/^_/, '') || 'emulator';
  const params = parameters(route);
  const body = requestBody(route, method);
  const said = description(route);
  const secured = security(route);
  return {
    operationId: `${method.toLowerCase()}${openApiPath(route.path).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ?? '').toUpperCase())}`,
    summary: route.summary,
    ...(said !== undefined && { description: said }),
    tags: [tag === 'proxy' ? 'proxies' : tag],
    ...(params.length > 0 && { parameters: params }),
    ...(body !== undefined && { requestBody: body }),
    responses: responses(route, method),
    ...(secured !== undefined && { security: secured }),
    ...(route.permission !== undefined && { 'x-svc-permission': route.permission }),
    ...(route.admin && { 'x-svc-loopback-only': true }),
  };
}

/** An operation's HEAD twin: the same statuses and headers, no content. */
function headOf(get: Operation): Operation {
  const responses: Operation['responses'] = {};
  for (const [status, answer] of Object.entries(get.responses)) {
    const { content: _content, ...rest } = answer;
    responses[status] =
      answer.$ref === undefined ? rest : { description: problemDefaults(Number(status)).title, headers: TRACE_HEADERS };
  }
  return {
    ...get,
    operationId: `head${get.operationId.slice(3)}`,
    summary: `${get.summary} (headers only)`,
    responses,
  };
}

/** The OpenAPI 3.1 document of `routes`. */
export function openApiDocument(routes: readonly Route[], version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const item = (paths[openApiPath(route.path)] ??= {});
    for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
      const made = operation(route, method);
      item[method.toLowerCase()] = made;
      if (method === 'GET' && !route.proxy) item.head = headOf(made);
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc platform API (emulator)',
      version,
      description:
        'The tokenization platform API as the svc emulator implements it, with its own /_emulator routes. Errors are RFC 9457 problem documents (`application/problem+json`); on /proxy an error of the proxy itself is `{"proxy_error": problem}`. Every answer carries SVC-TRACE-ID.',
    },
    servers: [{ url: DEFAULT_BASE_URL, description: '`svc serve` on its default port' }],
    security: [{ ApiKey: [] }],
    paths,
    components: {
      schemas: componentSchemas(),
      responses: problemResponses(routes),
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: headerName(API_KEY_HEADER), description: 'An Application key.' },
        ProxyKey: { type: 'apiKey', in: 'header', name: headerName(PROXY_KEY_HEADER), description: "A proxy's key." },
        ProxyKeyQuery: {
          type: 'apiKey',
          in: 'query',
          name: PROXY_KEY_QUERY,
          description: "A proxy's key, in the query string.",
        },
      },
      headers: {
        TraceId: {
          description: 'The trace id of the request (echoed when the request sent one).',
          schema: { type: 'string' },
        },
      },
      parameters: {
        TransactionId: {
          name: headerName(TRANSACTION_HEADER),
          in: 'header',
          description: 'Token writes and reads within an open transaction (Enterprise).',
          schema: { type: 'string', format: 'uuid' },
        },
      },
    },
  };
}

/** `svc-api-key` -> `SVC-API-KEY`, as the platform spells its headers. */
function headerName(name: string): string {
  return name.toUpperCase();
}
