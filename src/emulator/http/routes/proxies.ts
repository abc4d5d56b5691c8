import { USER_CODE_PROBLEMS, pageSchema, proxyAnswerSchema } from '../../../api/answer-schemas.js';
import type { Readable } from 'node:stream';
import { idParamsSchema, listQuerySchema, proxySchema } from '../../../api/schemas.js';
import type { ListQuery, ProxyBody } from '../../../api/types.js';
import { HttpError } from '../../errors.js';
import { requireMergePatch } from '../body.js';
import type { Exchange } from '../exchange.js';
import { TEXT_CONTENT_TYPE } from '../problems.js';
import { proxyCallOf } from '../proxy-call.js';
import { type Route, type RouteDeps, callerOf, empty, json } from '../route.js';

const params = idParamsSchema;
const one = { description: 'The proxy.', schema: proxyAnswerSchema };

/** Spec section 4.3: the proxies resource. */
export const proxyRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/proxies',
    summary: 'Create a proxy; its key is returned once.',
    schema: { body: proxySchema },
    permission: 'proxy:create',
    responses: { 201: { description: 'The proxy, with its key.', schema: proxyAnswerSchema } },
    problems: [422],
    handler: async (call, { services }) =>
      json(await services.proxies.create(callerOf(call), call.body as ProxyBody), 201),
  },
  {
    method: 'GET',
    path: '/proxies',
    summary: "List the tenant's proxies, a page at a time.",
    schema: { querystring: listQuerySchema },
    permission: 'proxy:read',
    responses: { 200: { description: 'A page of proxies.', schema: pageSchema(proxyAnswerSchema) } },
    handler: (call, { services }) => json(services.proxies.list(callerOf(call), call.query as ListQuery)),
  },
  {
    method: 'GET',
    path: '/proxies/:id',
    summary: 'One proxy.',
    schema: { params },
    permission: 'proxy:read',
    responses: { 200: one },
    handler: (call, { services }) => json(services.proxies.get(callerOf(call), call.params.id!)),
  },
  {
    method: 'PUT',
    path: '/proxies/:id',
    summary: 'Replace a proxy.',
    schema: { params, body: proxySchema },
    permission: 'proxy:update',
    responses: { 200: one },
    problems: [422],
    handler: async (call, { services }) =>
      json(await services.proxies.update(callerOf(call), call.params.id!, call.body as ProxyBody)),
  },
  {
    method: 'PATCH',
    path: '/proxies/:id',
    summary: 'Change a proxy with a JSON merge patch.',
    schema: { params },
    permission: 'proxy:update',
    responses: { 204: { description: 'Changed.' } },
    problems: [422],
    handler: async (call, { services }) => {
      requireMergePatch(call.headers['content-type']);
      await services.proxies.patch(callerOf(call), call.params.id!, call.body);
      return empty(204);
    },
  },
  {
    method: 'DELETE',
    path: '/proxies/:id',
    summary: 'Delete a proxy.',
    schema: { params },
    permission: 'proxy:delete',
    responses: { 204: { description: 'Deleted.' } },
    handler: async (call, { services }) => {
      await services.proxies.delete(callerOf(call), call.params.id!);
      return empty(204);
    },
  },
];

const PROXY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * `/proxy` and `/proxy/<suffix>`: invoking a proxy (the five methods of spec 4.3, no HEAD). Bodies
 * of any type arrive as bytes; authentication is the pipeline's (a proxy may accept anonymous
 * callers), and errors are answered as `{"proxy_error": ...}` by the one error answer.
 */
export const proxyInvokeRoutes: readonly Route[] = ['/proxy', '/proxy/*'].map((path) => ({
  method: PROXY_METHODS,
  path,
  summary:
    path === '/proxy'
      ? 'Invoke the proxy its key names: the request detokenized and forwarded to its destination.'
      : 'Invoke a proxy with a path suffix (appended to its destination).',
  public: true,
  proxy: true,
  responses: {
    default: {
      description:
        "The destination's answer (through the response transform; it carries SVC-PROXY-DESTINATION-STATUS), or a transform's custom response.",
      contentType: '*/*',
    },
  },
  problems: [...USER_CODE_PROBLEMS, 508],
  handler: invokeProxy,
}));

async function invokeProxy(call: Exchange, { pipeline }: RouteDeps): Promise<undefined> {
  const request = {
    method: call.method,
    url: call.url,
    headers: call.headers,
    rawHeaders: call.req.rawHeaders,
    traceId: call.id,
  };
  const answer = await pipeline.invoke(
    proxyCallOf(request, call.body, {
      onTenant: (tenantId) => {
        call.tenantId = tenantId;
      },
      onDetokenized: (count) => {
        call.detokenized = count;
      },
    }),
  );
  const streamed = answer.body !== undefined && typeof answer.body !== 'string' && !Buffer.isBuffer(answer.body);
  // Its headers go out with its first bytes: a destination that breaks off before them is a 502.
  if (streamed) await firstBytes(answer.body as Readable, call);
  for (const [name, value] of Object.entries(answer.headers)) call.header(name, value);
  if (answer.body === undefined || typeof answer.body === 'string') {
    // Text is sent as bytes: given a string, Node writes the header block in the body's encoding (UTF-8).
    if (!Object.keys(answer.headers).some((name) => name.toLowerCase() === 'content-type'))
      call.header('content-type', TEXT_CONTENT_TYPE);
    call.send(answer.status, Buffer.from(answer.body ?? ''));
    return undefined;
  }
  call.send(answer.status, answer.body as Buffer | Readable);
  return undefined;
}

/**
 * Waits for a streamed answer's first bytes (or its end). Until then nothing of it is answered: a
 * destination that breaks off first is a 502 proxy_error like one that broke off a small answer
 * (not an internal error carrying the destination's headers), and a caller that leaves first
 * lets the destination go.
 */
function firstBytes(body: Readable, call: Exchange): Promise<void> {
  if (body.readableLength > 0 || body.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (error?: unknown) => {
      body.off('readable', ready).off('end', ready).off('error', settle).off('close', cutOff);
      call.res.off('close', gone);
      if (error === undefined) resolve();
      else reject(brokenOff(error));
    };
    const ready = () => settle();
    const cutOff = () => settle(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    const gone = () => {
      // Destroyed, the body may still report an abort: nobody waits for it any more.
      body.on('error', () => {});
      body.destroy();
      settle(new Error('the caller left'));
    };
    // 'readable' comes with the first bytes; an empty answer may go straight to its end.
    body.once('readable', ready).once('end', ready).once('error', settle).once('close', cutOff);
    call.res.once('close', gone);
  });
}

function brokenOff(error: unknown): HttpError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new HttpError(502, `The destination broke off its answer before its first bytes: ${reason}.`, {
    title: 'Destination unreachable',
    cause: error,
  });
}
