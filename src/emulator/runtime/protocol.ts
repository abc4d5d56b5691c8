/**
 * Messages between the runtime (in the emulator) and a sandbox process. Everything crosses as plain
 * data over a Channel; the emulator treats whatever a sandbox sends as untrusted.
 */

/** The largest frame the emulator accepts from a sandbox (a 5 MB result, with room for the rest). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/**
 * The largest frame a sandbox accepts from the emulator: whatever a caller may send (5 MB) always
 * fits, whatever its bytes. A body of control bytes is six times its size as a JSON string
 * (`\u0001`), beside a configuration of up to 5 MB; a call whose input would still not fit fails
 * alone, before it is sent (SandboxProcess.invoke).
 */
export const MAX_INBOUND_FRAME_BYTES = 48 * 1024 * 1024;

/** Sent once, first: what every code version in the process shares. */
export interface InitRequest {
  type: 'init';
  /** Folder npm requires resolve from (the user's project). */
  projectDir: string;
  npmAllowlist: string[];
  /** Console output per call, and the burst of output with no call running (log-budget.ts). */
  maxLogBytes: number;
  maxLogLines: number;
  /** How fast the budget of output with no call running refills. */
  strayLogLinesPerSecond: number;
  /** `req.svc` calls one invocation may have in flight at once. */
  maxSvcInFlight: number;
  /** The largest result (its JSON) a call may return. */
  maxResultBytes: number;
  /** A debugger may pause the process: time with no call running is not judged as busy. */
  inspecting?: boolean;
  /** Busy time with no call running past which the process refuses calls (RuntimeWindows.busyForMs). */
  busyForMs: number;
  /** How long thread-pool work a returned call left may run on before the process refuses calls. */
  leftWorkGraceMs: number;
}

export interface LoadRequest {
  type: 'load';
  /** The code version's key in the process (`id@version#n`, one per loaded Instance). */
  vid: string;
  code: string;
  filename: string;
  /** The URL the code is compiled under (a debugger's breakpoints bind to it); stacks still show `filename`. */
  sourceUrl?: string;
}

export interface UnloadRequest {
  type: 'unload';
  vid: string;
}

export interface InvokeRequest {
  type: 'invoke';
  id: number;
  vid: string;
  /** Shows in console output; the request id of the call. */
  requestId: string;
  args: unknown;
  configuration: unknown;
  /** Whether `req.svc` is a client (an Application is configured) or null. */
  svc: boolean;
  /**
   * How far the tenant's clock is ahead of real time (svc/testing's `t.clock`): `Date.now()` and
   * `new Date()` in the call's code (its timers too) read real time plus this. Absent: 0.
   */
  clockOffsetMs?: number;
}

/** The emulator gave up on a call (its timeout): its output and `req.svc` calls are dropped. */
export interface CancelRequest {
  type: 'cancel';
  id: number;
}

/** Asks how busy the process was since its last call ended (work left running after a call returned). */
export interface ProbeRequest {
  type: 'probe';
  seq: number;
}

export interface RpcReply {
  type: 'rpc-result';
  id: number;
  ok: boolean;
  /** JSON of the value, or the problem the API would have answered (req.svc rejects with it as `data`). */
  value?: string;
  error?: RpcProblem;
}

/** A refused `req.svc` call's problem: as an HTTP request of the API would have been answered. */
export interface RpcProblem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  errors?: Record<string, string[]>;
  /** Why a 401, 403 or detokenization 400 was refused (the API's `explanation`). */
  explanation?: unknown;
}

/**
 * User code's `https` requests leave from the emulator, never from the sandbox: the sandbox sends
 * each request over the channel (its head, then its body in pieces) and the emulator streams the
 * answer back. Both ways a side sends at most a window of bytes the other has not acknowledged (the
 * emulator holds no more of a request than that, whatever the sandbox or destination does), and a
 * body, each way, is at most MAX_OUTBOUND_BODY_BYTES.
 */
export const MAX_OUTBOUND_BODY_BYTES = MAX_INBOUND_FRAME_BYTES;
/** The bytes of a body sent and not yet acknowledged, each way. */
export const OUTBOUND_WINDOW_BYTES = 256 * 1024;
/** The largest piece of a body one frame carries (as base64). */
export const OUTBOUND_CHUNK_BYTES = 64 * 1024;
/** Requests one sandbox process may have under way at once. */
export const MAX_OUTBOUND_IN_FLIGHT = 256;

/** The answer to a request of user code, from the emulator: its head, its body's pieces, its end or its failure. */
export type HttpsReply =
  | {
      type: 'https-response';
      id: number;
      status: number;
      statusMessage: string;
      headers: Record<string, string | string[]>;
    }
  | { type: 'https-data'; id: number; data: string }
  | { type: 'https-end'; id: number; trailers: Record<string, string> }
  | { type: 'https-error'; id: number; code?: string; message: string }
  /** That many bytes of the request's body were taken in: the sandbox may send as many more. */
  | { type: 'https-written'; id: number; bytes: number };

export type ToSandbox =
  | InitRequest
  | LoadRequest
  | UnloadRequest
  | InvokeRequest
  | CancelRequest
  | ProbeRequest
  | RpcReply
  | HttpsReply;

/** The TLS options of a request of user code, as the sandbox read them from its `https.request` options. */
export type HttpsTls = Partial<Record<(typeof TLS_STRING_OPTIONS)[number], string>> & {
  rejectUnauthorized?: boolean;
  family?: 4 | 6;
};
export const TLS_STRING_OPTIONS = [
  'ca',
  'cert',
  'key',
  'passphrase',
  'ciphers',
  'servername',
  'minVersion',
  'maxVersion',
] as const;

/** A request of user code, from the sandbox: opened, its body, what of its answer was read, or given up. */
export type HttpsMessage =
  | {
      type: 'https';
      id: number;
      /** The call it belongs to, or null: top-level code of `vid`. */
      call: number | null;
      vid: string;
      method: string;
      url: string;
      headers: Record<string, string>;
      tls: HttpsTls;
      /** The body written so far (base64); `end`: it is the whole body. */
      body: string;
      end: boolean;
    }
  | { type: 'https-body'; id: number; data: string; end: boolean }
  | { type: 'https-read'; id: number; bytes: number }
  | { type: 'https-abort'; id: number };

export interface SerializedError {
  /** `user`: thrown by the user's code; `load`: the code does not load; `result`: bad return value. */
  kind: 'user' | 'load' | 'result';
  name: string;
  message: string;
  /** The platform error class's status (AuthenticationError 401, ...), when one was thrown. */
  status?: number;
  /** A platform error's `errors` (what its constructor was given, as string lists by key). */
  errors?: Record<string, string[]>;
  /** A CustomHttpResponseError's response, passed through as it is. */
  custom?: { status: number; headers: Record<string, string>; body: unknown };
  /** The stack with the sandbox's own frames removed: the user's file and line. */
  stack?: string;
  /** `file:line:column` of the problem, when known (a load error, an error the code threw). */
  location?: string;
}

export type FromSandbox =
  | { type: 'booted' }
  | { type: 'loaded'; vid: string }
  | { type: 'load-error'; vid: string; error: SerializedError }
  /** The value as it is: the sandbox writes it into the frame as the JSON it checked. */
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: SerializedError }
  /**
   * The process must be replaced before this call runs: it was still busy with work a finished call
   * left behind, or (`tampered`) user code pinned a setting every emitter of the process inherits.
   */
  | { type: 'busy'; id: number; tampered?: boolean }
  | { type: 'log'; id: number | null; vid: string | null; level: LogLevel; text: string }
  | { type: 'rpc'; id: number; invocation: number; method: SvcMethod; params: string }
  /** CPU time used while no call was running, over the wall time since the last call ended or probe. */
  | { type: 'probe'; seq: number; idleCpuMs: number; idleWallMs: number }
  | HttpsMessage;

/** The shortest idle window busyWhileIdle judges. */
export const MIN_BUSY_WINDOW_MS = 40;
/**
 * Whether a process with no call running was running work a call left behind: half a core or more,
 * over at least 40 ms (a process between calls does next to nothing).
 */
export function busyWhileIdle(cpuMs: number, wallMs: number): boolean {
  return wallMs >= MIN_BUSY_WINDOW_MS && cpuMs > wallMs / 2;
}

/**
 * The busy time of a process with no call running that quiet time has not yet made up for:
 * `balanceMs` so far, and a new window judged. A busy window (half a core or more) adds its length,
 * a quiet one takes its length off (down to 0), and a window too short to judge leaves it as it
 * is; the calls between windows are not counted. A collection's burst is soon made up for, while
 * work left running that pauses now and then still adds up unless at least half its windows are
 * quiet. (Work a call starts ends with it: its timers are cleared and its thread-pool callbacks
 * dropped. What this watches is work top-level code keeps going, and what nothing else stops.)
 */
export function busyBalance(balanceMs: number, cpuMs: number, wallMs: number): number {
  if (wallMs < MIN_BUSY_WINDOW_MS) return balanceMs;
  return busyWhileIdle(cpuMs, wallMs) ? balanceMs + wallMs : Math.max(0, balanceMs - wallMs);
}

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

/** What `req.svc` offers user code, each answered by the emulator under the bound Application's permissions. */
export const SVC_METHODS = [
  'tokens.create',
  'tokens.retrieve',
  'tokens.delete',
  'tokens.list',
  'tokenize',
  'detokenize',
] as const;
export type SvcMethod = (typeof SVC_METHODS)[number];

/**
 * The built-in modules user code may require (Node 16's, as the platform allows them and as the
 * packages of its list need them), each Node's own or a facade (user-modules.ts).
 */
export const BUILTIN_ALLOWLIST = [
  'assert',
  'buffer',
  'crypto',
  'events',
  'http',
  'https',
  'os',
  'path',
  'process',
  'punycode',
  'querystring',
  'stream',
  'string_decoder',
  'timers',
  'url',
  'util',
  'zlib',
] as const;

/**
 * The npm packages the platform's Node 16 runtime (node-bt) allows, with the version range its
 * "Reactor Dependencies" page documents: resolved from the user's project and evaluated inside the
 * sandbox (their own requires obey the same rules). Its reactor-formulas SDK is `@svc/errors` here.
 */
export const PLATFORM_NPM_PACKAGES = {
  '@adyen/api-library': '^10.3.0',
  '@basis-theory/apple-pay-js': '^2.0.0',
  '@basis-theory/basis-theory-js': '^1.80.0',
  '@basis-theory/google-pay-js': '^1.0.0',
  '@basis-theory/shopify-js': '^1.0.0',
  'aws-sdk': '^2.1478.0',
  axios: '^0.27.2',
  braintree: '^3.18.0',
  'crypto-js': '^4.1.1',
  'csv-parse': '^5.5.2',
  dropbox: '^10.34.0',
  'dwolla-v2': '^3.4.0',
  exceljs: '^4.4.0',
  'fast-xml-parser': '^4.4.1',
  'json-stable-stringify': '^1.1.1',
  jsonpath: '^1.1.1',
  'mastercard-client-encryption': '^1.9.0',
  'mastercard-oauth1-signer': '^1.1.6',
  'node-fetch': '^2.7.0',
  'node-forge': '^1.3.1',
  'node-jose': '^2.2.0',
  openpgp: '^5.10.2',
  'pdf-lib': '^1.17.1',
  pdfkit: '^0.13.0',
  'snakecase-keys': '^5.5.0',
  soap: '^1.0.0',
  ssh2: '^1.14.0',
  stripe: '^8.222.0',
  'tesseract.js': '^4.1.4',
  twilio: '^4.19.0',
  uuid: '^8.3.2',
  xmlbuilder2: '^3.0.2',
  yup: '^1.3.2',
} as const;

/** The names of PLATFORM_NPM_PACKAGES: what user code may require by default. */
export const DEFAULT_NPM_ALLOWLIST = Object.keys(PLATFORM_NPM_PACKAGES) as (keyof typeof PLATFORM_NPM_PACKAGES)[];

/** A module of svc's own that user code can require for the platform's error classes. */
export const ERRORS_MODULE = '@svc/errors';
