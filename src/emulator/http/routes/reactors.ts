import {
  USER_CODE_PROBLEMS,
  invocationAcceptedSchema,
  pageSchema,
  reactorAnswerSchema,
  reactorResponseSchema,
  reactorResultSchema,
} from '../../../api/answer-schemas.js';
import {
  idParamsSchema,
  invokeReactorSchema,
  listQuerySchema,
  reactorSchema,
  resultParamsSchema,
} from '../../../api/schemas.js';
import type { InvokeReactorBody, ListQuery, ReactorBody } from '../../../api/types.js';
import { requireMergePatch } from '../body.js';
import { type Route, callerOf, empty, json, tokenContext } from '../route.js';

const params = idParamsSchema;
const one = { description: 'The reactor.', schema: reactorAnswerSchema };

/** Spec section 4.4: reactors, their invocation, and (emulator) the results of asynchronous ones. */
export const reactorRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/reactors',
    summary: 'Create a reactor from its code.',
    schema: { body: reactorSchema },
    permission: 'reactor:create',
    responses: { 201: one },
    problems: [422],
    handler: async (call, { services }) =>
      json(await services.reactors.create(callerOf(call), call.body as ReactorBody), 201),
  },
  {
    method: 'GET',
    path: '/reactors',
    summary: "List the tenant's reactors, a page at a time.",
    schema: { querystring: listQuerySchema },
    permission: 'reactor:read',
    responses: { 200: { description: 'A page of reactors.', schema: pageSchema(reactorAnswerSchema) } },
    handler: (call, { services }) => json(services.reactors.list(callerOf(call), call.query as ListQuery)),
  },
  {
    method: 'GET',
    path: '/reactors/:id',
    summary: 'One reactor.',
    schema: { params },
    permission: 'reactor:read',
    responses: { 200: one },
    handler: (call, { services }) => json(services.reactors.get(callerOf(call), call.params.id!)),
  },
  {
    method: 'PUT',
    path: '/reactors/:id',
    summary: 'Replace a reactor.',
    schema: { params, body: reactorSchema },
    permission: 'reactor:update',
    responses: { 200: one },
    problems: [422],
    handler: async (call, { services }) =>
      json(await services.reactors.update(callerOf(call), call.params.id!, call.body as ReactorBody)),
  },
  {
    method: 'PATCH',
    path: '/reactors/:id',
    summary: 'Change a reactor with a JSON merge patch.',
    schema: { params },
    permission: 'reactor:update',
    responses: { 204: { description: 'Changed.' } },
    problems: [422],
    handler: async (call, { services }) => {
      requireMergePatch(call.headers['content-type']);
      await services.reactors.patch(callerOf(call), call.params.id!, call.body);
      return empty(204);
    },
  },
  {
    method: 'DELETE',
    path: '/reactors/:id',
    summary: 'Delete a reactor.',
    schema: { params },
    permission: 'reactor:delete',
    responses: { 204: { description: 'Deleted.' } },
    handler: async (call, { services }) => {
      await services.reactors.delete(callerOf(call), call.params.id!);
      return empty(204);
    },
  },
  {
    method: 'POST',
    path: '/reactors/:id/react',
    summary: "Invoke a reactor with args; its answer, or 202 and a result's id when asynchronous.",
    schema: { params, body: invokeReactorSchema },
    responses: {
      200: {
        description: "The reactor's answer: `raw` as returned, `tokens` from its `tokenize` block.",
        schema: reactorResponseSchema,
      },
      202: { description: 'Asynchronous (callback_url): the result to poll.', schema: invocationAcceptedSchema },
      default: {
        description:
          "A custom response the reactor's code threw (CustomHttpResponseError): its status, headers and body.",
        contentType: '*/*',
      },
    },
    problems: USER_CODE_PROBLEMS,
    handler: async (call, { services }) => {
      const body = (call.body as InvokeReactorBody | null | undefined) ?? {};
      const answer = await services.reactors.invoke(tokenContext(call), call.params.id!, body, call.id);
      return json(answer.body, answer.status);
    },
  },
  {
    method: 'GET',
    path: '/reactors/:id/results/:request_id',
    summary: 'The result of an asynchronous invocation.',
    schema: { params: resultParamsSchema },
    responses: { 200: { description: 'The invocation and the delivery of its webhook.', schema: reactorResultSchema } },
    handler: (call, { services }) =>
      json(services.reactors.result(callerOf(call), call.params.id!, call.params.request_id!)),
  },
];
