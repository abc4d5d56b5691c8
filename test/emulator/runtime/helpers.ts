import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import {
  Runtime,
  UserCodeError,
  type Instance,
  type InvokeOptions,
  type InvokeResult,
  type RuntimeOptions,
} from '../../../src/emulator/runtime/index.js';
import { OutboundGateway } from '../../../src/emulator/outbound/index.js';

/**
 * The sandbox process runs from dist/: `npm run build` before these tests (and again after src changes).
 */

/**
 * A Runtime whose user code's requests go out through a gateway of its own (as createEmulator's
 * do through the emulator's); `gateway` closes it with the runtime. Loads may take 30 s (a
 * generous bound for a loaded machine) unless the test sets its own limit.
 */
export function withGateway(options: RuntimeOptions = {}, gateway = new OutboundGateway()): Runtime {
  const rt = new Runtime(
    { loadTimeoutMs: 30_000, ...options },
    { outbound: (request, origin) => gateway.send(request, origin) },
  );
  const dispose = rt.dispose.bind(rt);
  rt.dispose = async () => {
    await dispose();
    await gateway.close();
  };
  return rt;
}

/** A Runtime (its first sandbox process booting now), disposed when the test ends. */
export function runtime(options: RuntimeOptions = {}, gateway?: OutboundGateway): Runtime {
  const rt = withGateway(options, gateway);
  rt.prewarm();
  onTestFinished(() => rt.dispose());
  return rt;
}

/** One Runtime for every test of the enclosing describe block: call at describe level, use the getter in tests. */
export function sharedRuntime(options: RuntimeOptions = {}): () => Runtime {
  let rt: Runtime | undefined;
  beforeAll(() => {
    rt = withGateway(options);
    rt.prewarm();
  });
  afterAll(async () => {
    await rt?.dispose();
  });
  return () => {
    if (!rt) throw new Error('sharedRuntime() is only usable inside a test');
    return rt;
  };
}

let seq = 0;

/** An id no other test uses. */
export function freshId(prefix = 'reactor'): string {
  return `${prefix}-${++seq}`;
}

export const FILENAME = 'reactors/test.js';

/** Loads `code` under a fresh id (version 1). */
export function load(rt: Runtime, code: string, filename = FILENAME): Promise<Instance> {
  return rt.load({ id: freshId(), version: 1, code, filename });
}

export interface Req {
  args?: unknown;
  configuration?: unknown;
}

/**
 * Invokes an instance once. The timeout is a generous bound (20 s) unless told otherwise: a test of
 * timeouts sets its own, and no other verdict should depend on how fast a loaded machine answers.
 */
export function invoke(instance: Instance, req: Req = {}, opts: Partial<InvokeOptions> = {}): Promise<InvokeResult> {
  return instance.invoke(
    { args: req.args ?? null, configuration: req.configuration ?? {} },
    { timeoutMs: 20_000, ...opts },
  );
}

/**
 * Loads `code` under a fresh id, invokes it once and unloads it (so a shared runtime does not
 * keep a warm worker per test). Load errors reject as they are.
 */
export async function run(
  rt: Runtime,
  code: string,
  req: Req = {},
  opts: Partial<InvokeOptions> & { filename?: string } = {},
): Promise<InvokeResult> {
  const { filename, ...invokeOptions } = opts;
  const instance = await load(rt, code, filename);
  try {
    return await invoke(instance, req, invokeOptions);
  } finally {
    await rt.unload(instance.id);
  }
}

/** `run`, answering only the result's value. */
export async function value(
  rt: Runtime,
  code: string,
  req: Req = {},
  opts: Partial<InvokeOptions> & { filename?: string } = {},
): Promise<unknown> {
  return (await run(rt, code, req, opts)).value;
}

/** The UserCodeError a promise rejects with (fails the test if it resolves or rejects with something else). */
export async function rejection(promise: Promise<unknown>): Promise<UserCodeError> {
  const outcome = await promise.then(
    (resolved) => ({ resolved }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(UserCodeError);
  return outcome.error as UserCodeError;
}

/**
 * User code that runs `body` (statements that `return` something) and answers
 * `{ value }` (undefined as the string 'undefined') or `{ threw: 'Name: message' }`.
 */
export function attempt(body: string): string {
  return `module.exports = async function (req) {
  try {
    const value = await (async () => { ${body} })();
    return { value: value === undefined ? 'undefined' : value };
  } catch (e) {
    return { threw: String(e && e.name) + ': ' + String(e && e.message) };
  }
};`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
