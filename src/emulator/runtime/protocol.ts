/** Messages between the runtime (main thread) and a sandbox worker. Everything crosses as plain data. */

export interface LoadRequest {
  type: 'load';
  code: string;
  filename: string;
  /** Folder npm requires resolve from (the user's project). */
  projectDir: string;
  npmAllowlist: string[];
  maxLogBytes: number;
}

export interface InvokeRequest {
  type: 'invoke';
  id: number;
  /** Shows in console output; the request id of the call. */
  requestId: string;
  /** JSON of `{ args, configuration }`. */
  payload: string;
  /** Whether `req.svc` is a client (an Application is configured) or null. */
  svc: boolean;
}

export interface RpcReply {
  type: 'rpc-result';
  id: number;
  ok: boolean;
  /** JSON of the value, or the error as `{ status, title, detail }`. */
  value?: string;
  error?: { status: number; title: string; detail: string };
}

export type ToWorker = LoadRequest | InvokeRequest | RpcReply;

export interface SerializedError {
  /** `user`: thrown by the user's code; `load`: the code does not load; `result`: bad return value. */
  kind: 'user' | 'load' | 'result';
  name: string;
  message: string;
  /** The platform error class's status (AuthenticationError 401, ...), when one was thrown. */
  status?: number;
  /** A CustomHttpResponseError's response, passed through as it is. */
  custom?: { status: number; headers: Record<string, string>; body: unknown };
  /** The stack with the sandbox's own frames removed: the user's file and line. */
  stack?: string;
  /** `file:line:column` of the problem, when known (load errors). */
  location?: string;
}

export type FromWorker =
  | { type: 'booted' }
  | { type: 'loaded' }
  | { type: 'load-error'; error: SerializedError }
  | { type: 'result'; id: number; ok: true; value: string }
  | { type: 'result'; id: number; ok: false; error: SerializedError }
  | { type: 'log'; id: number | null; level: LogLevel; text: string }
  | { type: 'rpc'; id: number; invocation: number; method: SvcMethod; params: string };

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

/** What `req.svc` offers user code, each answered by the main thread under the bound Application's permissions. */
export const SVC_METHODS = ['tokens.create', 'tokens.retrieve', 'tokens.delete', 'tokens.list', 'tokenize', 'detokenize'] as const;
export type SvcMethod = (typeof SVC_METHODS)[number];

/** The built-in modules user code may require (Node 16's, as the platform allows). */
export const BUILTIN_ALLOWLIST = ['buffer', 'crypto', 'https', 'querystring', 'stream', 'url', 'util'] as const;

/**
 * npm packages the platform allows user code to require, resolved from the user's project and
 * evaluated inside the sandbox (their own requires obey the same rules).
 */
export const DEFAULT_NPM_ALLOWLIST = ['crypto-js', 'date-fns', 'jose', 'lodash', 'moment', 'qs', 'uuid', 'validator'] as const;

/** A module of svc's own that user code can require for the platform's error classes. */
export const ERRORS_MODULE = '@svc/errors';
