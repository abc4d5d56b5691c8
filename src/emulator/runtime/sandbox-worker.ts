import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UserCodeError } from './errors.js';
import type { FromWorker, LoadRequest, SerializedError, ToWorker } from './protocol.js';
import type { LogEntry, SvcHandler } from './types.js';

/**
 * The compiled worker script. Under the test runner this module runs from src/ (TypeScript), but a
 * worker thread needs JavaScript: it then uses the build in dist/.
 */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), 'worker.js');
  if (existsSync(beside)) return beside;
  const built = path.join(path.dirname(here).replace(`${path.sep}src${path.sep}`, `${path.sep}dist${path.sep}`), 'worker.js');
  if (existsSync(built)) return built;
  throw new Error(`the sandbox worker is not built (${built}); run npm run build`);
}

export interface WorkerLimits {
  memoryMb: number;
}

interface PendingInvoke {
  id: number;
  instance: string;
  requestId: string | undefined;
  svc: SvcHandler | null;
  logs: LogEntry[];
  resolve: (value: string) => void;
  reject: (error: UserCodeError) => void;
}

let invocationSeq = 0;

/** One sandbox worker thread, seen from the main thread: boot, load one code version, invoke. */
export class SandboxWorker {
  private readonly worker: Worker;
  private pendingBoot: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private pendingLoad: { resolve: () => void; reject: (error: UserCodeError) => void } | undefined;
  private pendingInvoke: PendingInvoke | undefined;
  /** Set once the worker is gone (terminated, crashed, out of memory). */
  dead = false;
  /** What this worker's code belongs to: console output outside any call is reported under it. */
  private instance = '';
  readonly booted: Promise<void>;

  constructor(
    private readonly limits: WorkerLimits,
    private readonly onLog: (entry: LogEntry) => void,
  ) {
    this.worker = new Worker(workerScript(), {
      // Nothing of the host's environment, arguments or stdio reaches user code.
      env: {},
      argv: [],
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb, maxYoungGenerationSizeMb: Math.min(32, Math.max(4, limits.memoryMb / 4)), stackSizeMb: 4 },
    });
    this.worker.stdout.resume();
    this.worker.stderr.resume();
    this.booted = new Promise((resolve, reject) => (this.pendingBoot = { resolve, reject }));
    this.booted.catch(() => {});
    this.worker.on('message', (message: FromWorker) => this.onMessage(message));
    this.worker.on('error', (error: Error & { code?: string }) => this.die(this.deathError(error)));
    this.worker.on('exit', () => this.die(new UserCodeError(500, 'The sandbox worker stopped unexpectedly.')));
  }

  /** Compiles and runs the module; rejects with a 422 carrying the loader's message. */
  load(request: Omit<LoadRequest, 'type'>, instance: string, timeoutMs: number): Promise<void> {
    this.instance = instance;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        void this.terminate();
        reject(new UserCodeError(422, `${request.filename} did not finish loading within ${timeoutMs} ms (a loop at the top level?).`, { title: 'Code does not load' }));
      }, timeoutMs);
      this.pendingLoad = {
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
      this.send({ type: 'load', ...request });
    });
  }

  /** Runs the loaded function once; rejects with a UserCodeError (408 on timeout, after terminating). */
  invoke(payload: string, options: { instance: string; timeoutMs: number; requestId?: string | undefined; svc: SvcHandler | null }): Promise<{ value: string; logs: LogEntry[] }> {
    const logs: LogEntry[] = [];
    return new Promise<{ value: string; logs: LogEntry[] }>((resolve, reject) => {
      const id = ++invocationSeq;
      const timer = setTimeout(() => {
        this.pendingInvoke = undefined;
        void this.terminate();
        reject(new UserCodeError(408, `The code ran longer than its timeout of ${options.timeoutMs} ms and was stopped.`, { title: 'Timed out', logs }));
      }, options.timeoutMs);
      this.pendingInvoke = {
        id,
        instance: options.instance,
        requestId: options.requestId,
        svc: options.svc,
        logs,
        resolve: (value) => (clearTimeout(timer), resolve({ value, logs })),
        reject: (error) => (clearTimeout(timer), reject(error)),
      };
      this.send({ type: 'invoke', id, requestId: options.requestId ?? '', payload, svc: options.svc !== null });
    });
  }

  async terminate(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }

  private send(message: ToWorker): void {
    if (this.dead) throw new UserCodeError(500, 'The sandbox worker is gone.');
    this.worker.postMessage(message);
  }

  private onMessage(message: FromWorker): void {
    switch (message.type) {
      case 'booted':
        this.pendingBoot?.resolve();
        this.pendingBoot = undefined;
        return;
      case 'loaded':
        this.pendingLoad?.resolve();
        this.pendingLoad = undefined;
        return;
      case 'load-error':
        this.pendingLoad?.reject(new UserCodeError(422, message.error.message, { title: 'Code does not load', userStack: message.error.stack }));
        this.pendingLoad = undefined;
        return;
      case 'log': {
        const pending = this.pendingInvoke?.id === message.id ? this.pendingInvoke : undefined;
        const entry: LogEntry = { level: message.level, text: message.text, instance: pending?.instance ?? this.instance, requestId: pending?.requestId };
        pending?.logs.push(entry);
        this.onLog(entry);
        return;
      }
      case 'rpc':
        void this.answerRpc(message.id, message.invocation, message.method, message.params);
        return;
      case 'result': {
        const pending = this.pendingInvoke;
        if (!pending || pending.id !== message.id) return;
        this.pendingInvoke = undefined;
        if (message.ok) pending.resolve(message.value);
        else pending.reject(fromSerialized(message.error, pending.logs));
        return;
      }
    }
  }

  private async answerRpc(id: number, invocation: number, method: Parameters<SvcHandler>[0], params: string): Promise<void> {
    const pending = this.pendingInvoke?.id === invocation ? this.pendingInvoke : undefined;
    try {
      if (!pending?.svc) throw new UserCodeError(403, 'req.svc is not available: no Application is configured.');
      const value = await pending.svc(method, JSON.parse(params));
      if (!this.dead) this.send({ type: 'rpc-result', id, ok: true, value: JSON.stringify(value ?? null) });
    } catch (error) {
      const { status = 500, title = 'Internal server error', detail = 'req.svc failed' } = error as { status?: number; title?: string; detail?: string };
      if (!this.dead) this.send({ type: 'rpc-result', id, ok: false, error: { status, title, detail } });
    }
  }

  private deathError(error: Error & { code?: string }): UserCodeError {
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new UserCodeError(500, `The code ran out of memory (limit ${this.limits.memoryMb} MB) and was stopped.`, { title: 'Out of memory' });
    }
    return new UserCodeError(500, `The sandbox worker failed: ${error.message}`);
  }

  private die(error: UserCodeError): void {
    this.dead = true;
    this.pendingBoot?.reject(error);
    // Dying while loading (a memory bomb at the top level) is code that does not load.
    this.pendingLoad?.reject(new UserCodeError(422, error.detail, { title: 'Code does not load' }));
    if (this.pendingInvoke) this.pendingInvoke.reject(new UserCodeError(error.status, error.detail, { title: error.title, logs: this.pendingInvoke.logs }));
    this.pendingBoot = this.pendingLoad = this.pendingInvoke = undefined;
  }
}

/** The status of what user code threw: the platform classes' own, a custom response's, else 500. */
function fromSerialized(error: SerializedError, logs: LogEntry[]): UserCodeError {
  if (error.custom) {
    return new UserCodeError(error.custom.status, error.message, { title: 'Custom response', custom: error.custom, logs, userStack: error.stack });
  }
  if (error.kind === 'result') return new UserCodeError(500, error.message, { title: 'Invalid result', logs });
  const status = error.status ?? 500;
  const detail = error.status !== undefined ? error.message : `${error.name}: ${error.message}`;
  return new UserCodeError(status, detail, { ...(error.status === undefined && { title: 'User code error' }), userStack: error.stack, logs });
}
