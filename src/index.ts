/**
 * The library entry: the emulator (createEmulator), the HTTP client of the API (ApiClient, also
 * pointed at a remote server), and the wire types, problem types and events they share.
 */
export {
  createEmulator,
  EmulatorError,
  type Emulator,
  type EmulatorEvent,
  type EmulatorEvents,
  type EmulatorOptions,
  type EmulatorReady,
  type EmulatorTenants,
  type TenantSpec,
  type Tier,
} from './emulator/index.js';
export { ApiClient, ApiError, ConnectionError, type ClientOptions } from './client/index.js';
export { PROBLEM_TYPES, type Problem, type ProblemType } from './api/problem.js';
export { DEFAULT_QUOTAS, type QuotaKind, type QuotaSettings } from './api/quotas.js';
export type * from './api/types.js';
