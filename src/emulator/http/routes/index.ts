import type { Route } from '../route.js';
import { applicationRoutes } from './applications.js';
import { emulatorRoutes } from './emulator.js';
import { eventRoutes } from './events.js';
import { openApiRoutes } from './openapi.js';
import { proxyInvokeRoutes, proxyRoutes } from './proxies.js';
import { reactorRoutes } from './reactors.js';
import { replayRoutes } from './replay.js';
import { stateRoutes } from './state.js';
import { tenantForkRoutes } from './tenant-forks.js';
import { tokenRoutes } from './tokens.js';
import { transactionRoutes } from './transactions.js';
import { webhookRoutes } from './webhooks.js';

export type { Method, Route } from '../route.js';

/**
 * Every route of the HTTP surface, declared once: method, path, schemas, permission or flags
 * (public, admin, proxy), a one-line summary and the handler. The server registers nothing else;
 * an OpenAPI document can be read off this table.
 */
export const routes: readonly Route[] = [
  ...emulatorRoutes,
  ...tenantForkRoutes,
  ...replayRoutes,
  ...openApiRoutes(() => routes),
  ...eventRoutes,
  ...webhookRoutes,
  ...stateRoutes,
  ...applicationRoutes,
  ...tokenRoutes,
  ...transactionRoutes,
  ...reactorRoutes,
  ...proxyRoutes,
  ...proxyInvokeRoutes,
];
