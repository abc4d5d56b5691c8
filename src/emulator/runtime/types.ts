import type { LogLevel, SvcMethod } from './protocol.js';

/** One line of user code's console output. */
export interface LogEntry {
  level: LogLevel;
  text: string;
  /** The code version's id (a reactor or transform id). */
  instance: string;
  requestId?: string | undefined;
}

/** Answers a `req.svc` call under the Application bound to the invocation. */
export type SvcHandler = (method: SvcMethod, params: unknown) => Promise<unknown>;

export interface LoadSpec {
  /** What the code belongs to (a reactor id, a proxy transform id). */
  id: string;
  /** Changes whenever the code does; loading the same id and version again reuses the instance. */
  version: string | number;
  code: string;
  /** The user's name for the file; stack traces and load errors show it. */
  filename: string;
}

export interface InvokeOptions {
  timeoutMs: number;
  requestId?: string;
  /** The client behind `req.svc`; null or absent makes `req.svc` null. */
  svc?: SvcHandler | null;
}

export interface InvokeResult {
  value: unknown;
  logs: LogEntry[];
  ms: number;
}

export interface RuntimeOptions {
  /** Where allowlisted npm packages are resolved from (the user's project). Default: cwd. */
  projectDir?: string;
  npmAllowlist?: readonly string[];
  /** Workers one code version may use at once (hot concurrency beyond the first). Default 4. */
  maxWorkersPerInstance?: number;
  /** How long an extra worker may sit idle before it is stopped. Default 10 s. */
  idleMs?: number;
  /** Heap limit of each worker. Default 128 MB. */
  memoryMb?: number;
  /** Pre-booted workers kept ready, so a new instance or a reload costs milliseconds. Default 1. */
  spares?: number;
  /** How long top-level code may take to load. Default 5 s. */
  loadTimeoutMs?: number;
  /** Console bytes kept per invocation. Default 64 KiB. */
  maxLogBytes?: number;
  /** Every console line of user code, as it happens. */
  onLog?: (entry: LogEntry) => void;
}
