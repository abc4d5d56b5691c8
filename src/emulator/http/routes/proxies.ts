import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { idParamsSchema, listQuerySchema, proxySchema } from '../../../api/schemas.js';
import type { ListQuery, ProxyBody } from '../../../api/types.js';
import type { ProxyPipeline } from '../../proxy/pipeline.js';
import type { ProxyService } from '../../services/proxies.js';
import { callerOf } from '../auth.js';
import { requireMergePatch } from '../body.js';
import { PROXY_BODY_LIMIT, proxyCallOf } from '../proxy-call.js';
import { sendText } from '../send.js';

type IdParams = { Params: { id: string } };

/** Spec section 4.3: the proxies resource. */
export function proxyRoutes(app: FastifyInstance, proxies: ProxyService): void {
  app.post<{ Body: ProxyBody }>(
    '/proxies',
    { schema: { body: proxySchema }, config: { permission: 'proxy:create' } },
    async (request, reply) => reply.status(201).send(await proxies.create(callerOf(request), request.body)),
  );

  app.get<{ Querystring: ListQuery }>(
    '/proxies',
    { schema: { querystring: listQuerySchema }, config: { permission: 'proxy:read' } },
    async (request) => proxies.list(callerOf(request), request.query),
  );

  app.get<IdParams>(
    '/proxies/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'proxy:read' } },
    async (request) => proxies.get(callerOf(request), request.params.id),
  );

  app.put<IdParams & { Body: ProxyBody }>(
    '/proxies/:id',
    { schema: { params: idParamsSchema, body: proxySchema }, config: { permission: 'proxy:update' } },
    async (request) => proxies.update(callerOf(request), request.params.id, request.body),
  );

  app.patch<IdParams>(
    '/proxies/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'proxy:update' } },
    async (request, reply) => {
      requireMergePatch(request.headers['content-type']);
      await proxies.patch(callerOf(request), request.params.id, request.body);
      return reply.status(204).send();
    },
  );

  app.delete<IdParams>(
    '/proxies/:id',
    { schema: { params: idParamsSchema }, config: { permission: 'proxy:delete' } },
    async (request, reply) => {
      await proxies.delete(callerOf(request), request.params.id);
      return reply.status(204).send();
    },
  );
}

/**
 * `/proxy` and `/proxy/<suffix>`: invoking a proxy. In a scope of their own, bodies of any type
 * arrive as raw bytes; authentication is the pipeline's (a proxy may accept anonymous callers),
 * and errors are answered as `{"proxy_error": ...}` by the one error handler.
 */
export function proxyInvokeRoutes(app: FastifyInstance, pipeline: ProxyPipeline): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: PROXY_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const { method, url, headers, id } = request;
      const call = proxyCallOf(
        { method, url, headers, rawHeaders: request.raw.rawHeaders, traceId: id },
        request.body,
        {
          onTenant: (tenantId) => {
            request.tenantId = tenantId;
          },
          onDetokenized: (count) => {
            request.detokenized = count;
          },
        },
      );
      const answer = await pipeline.invoke(call);
      reply.status(answer.status);
      for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
      if (answer.body === undefined || typeof answer.body === 'string') return sendText(reply, answer.body ?? '');
      return reply.send(answer.body);
    };
    for (const url of ['/proxy', '/proxy/*']) {
      // The five methods of spec 4.3, and no HEAD route of fastify's own making.
      scope.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        url,
        exposeHeadRoute: false,
        config: { public: true, proxy: true },
        handler,
      });
    }
  });
}
