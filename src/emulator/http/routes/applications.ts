import { applicationAnswerSchema, pageSchema } from '../../../api/answer-schemas.js';
import {
  createApplicationSchema,
  idParamsSchema,
  listQuerySchema,
  updateApplicationSchema,
} from '../../../api/schemas.js';
import type { CreateApplicationBody, ListQuery, UpdateApplicationBody } from '../../../api/types.js';
import { type Route, callerOf, empty, json } from '../route.js';

const params = idParamsSchema;
const one = { description: 'The Application (without its key).', schema: applicationAnswerSchema };

/** Spec section 4.1: the seven Applications endpoints. */
export const applicationRoutes: readonly Route[] = [
  {
    method: 'POST',
    path: '/applications',
    summary: 'Create an Application; its key is returned once.',
    schema: { body: createApplicationSchema },
    permission: 'application:create',
    responses: { 201: { description: 'The Application, with its key.', schema: applicationAnswerSchema } },
    handler: async (call, { services }) =>
      json(await services.applications.create(callerOf(call), call.body as CreateApplicationBody), 201),
  },
  {
    method: 'GET',
    path: '/applications',
    summary: "List the tenant's Applications, a page at a time.",
    schema: { querystring: listQuerySchema },
    permission: 'application:read',
    responses: { 200: { description: 'A page of Applications.', schema: pageSchema(applicationAnswerSchema) } },
    handler: (call, { services }) => json(services.applications.list(callerOf(call), call.query as ListQuery)),
  },
  {
    // Static segments win over parameters: /applications/key is never an id.
    method: 'GET',
    path: '/applications/key',
    summary: 'The Application of the key in the request.',
    permission: 'application:read',
    responses: { 200: one },
    handler: (call, { services }) => json(services.applications.get(callerOf(call), callerOf(call).application.id)),
  },
  {
    method: 'GET',
    path: '/applications/:id',
    summary: 'One Application.',
    schema: { params },
    permission: 'application:read',
    responses: { 200: one },
    handler: (call, { services }) => json(services.applications.get(callerOf(call), call.params.id!)),
  },
  {
    method: 'PUT',
    path: '/applications/:id',
    summary: "Replace an Application's name, permissions and rules.",
    schema: { params, body: updateApplicationSchema },
    permission: 'application:update',
    responses: { 200: one },
    handler: async (call, { services }) =>
      json(await services.applications.update(callerOf(call), call.params.id!, call.body as UpdateApplicationBody)),
  },
  {
    method: 'POST',
    path: '/applications/:id/regenerate',
    summary: "Replace an Application's key; the new one is returned once.",
    schema: { params },
    permission: 'application:update',
    responses: { 200: { description: 'The Application, with its new key.', schema: applicationAnswerSchema } },
    handler: async (call, { services }) =>
      json(await services.applications.regenerate(callerOf(call), call.params.id!)),
  },
  {
    method: 'DELETE',
    path: '/applications/:id',
    summary: 'Delete an Application and its key.',
    schema: { params },
    permission: 'application:delete',
    responses: { 204: { description: 'Deleted.' } },
    handler: async (call, { services }) => {
      await services.applications.delete(callerOf(call), call.params.id!);
      return empty(204);
    },
  },
];
