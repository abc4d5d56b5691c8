import { createHash } from 'node:crypto';
import { DEFAULT_NPM_ALLOWLIST } from './protocol.js';
import { Instance } from './instance.js';
import { SandboxWorker } from './sandbox-worker.js';
import type { LoadSpec, LogEntry, RuntimeOptions } from './types.js';

export { UserCodeError } from './errors.js';
export type { Instance } from './instance.js';
export type { InvokeOptions, InvokeResult, LoadSpec, LogEntry, RuntimeOptions, SvcHandler } from './types.js';
export { BUILTIN_ALLOWLIST, DEFAULT_NPM_ALLOWLIST, SVC_METHODS, type SvcMethod } from './protocol.js';

/** A version that changes exactly when the code (or the file name its stack traces show) does. */
export function codeVersion(code: string, filename: string): string {
  return createHash('sha256').update(filename).update('\u0000').update(code).digest('hex').slice(0, 16);
}

const recordVersions = new WeakMap<object, Map<string, string>>();

/**
 * codeVersion of code a stored record holds, hashed once per record object and file name rather
 * than on every call: records are replaced on every change, never edited in place.
 */
export function recordCodeVersion(record: object, code: string, filename: string): string {
  let byFile = recordVersions.get(record);
  if (!byFile) recordVersions.set(record, (byFile = new Map()));
  let version = byFile.get(filename);
  if (version === undefined) byFile.set(filename, (version = codeVersion(code, filename)));
  return version;
}

/**
 * The sandbox runtime shared by reactors and proxy transforms. `load` compiles a code version in
 * a fresh worker (taken from pre-booted spares) and, only once it loads, makes it the current
 * instance of its id: calls in flight finish on the old one, which is then stopped; a version that
 * fails to load leaves the old one serving. Each worker only ever holds one code version, so no
 * compilation cache builds up across reloads.
 */
export class Runtime {
  private readonly options: Required<Omit<RuntimeOptions, 'onLog'>> & { onLog: (entry: LogEntry) => void };
  private readonly spares: Promise<SandboxWorker>[] = [];
  private readonly instances = new Map<string, Instance>();
  private readonly loading = new Map<string, Promise<Instance>>();
  /** The load asked for last, per id: it, and no earlier one finishing later, becomes current. */
  private readonly latest = new Map<string, Promise<Instance>>();
  private disposed = false;

  constructor(options: RuntimeOptions = {}) {
    this.options = {
      projectDir: options.projectDir ?? process.cwd(),
      npmAllowlist: options.npmAllowlist ?? DEFAULT_NPM_ALLOWLIST,
      maxWorkersPerInstance: options.maxWorkersPerInstance ?? 4,
      idleMs: options.idleMs ?? 10_000,
      memoryMb: options.memoryMb ?? 128,
      spares: options.spares ?? 1,
      loadTimeoutMs: options.loadTimeoutMs ?? 5_000,
      maxLogBytes: options.maxLogBytes ?? 64 * 1024,
      onLog: options.onLog ?? (() => {}),
    };
  }

  /**
   * Boots the spare workers now rather than at the first load (`svc serve` does, so that the
   * first reactor saved loads in milliseconds; a library user or a test may not want the CPU spent).
   */
  prewarm(): void {
    this.refill();
  }

  /** The current instance of an id, if one is loaded. */
  get(id: string): Instance | undefined {
    return this.instances.get(id);
  }

  /**
   * Loads a code version and makes it current for its id. Loading the version already current
   * returns it as it is. Rejects with a 422 UserCodeError (file:line:column) when the code does not load.
   */
  load(spec: LoadSpec): Promise<Instance> {
    const current = this.instances.get(spec.id);
    if (current && current.version === spec.version && current.spec.code === spec.code) return Promise.resolve(current);
    const key = `${spec.id}\u0000${spec.version}`;
    const inProgress = this.loading.get(key);
    if (inProgress) return inProgress;
    const promise: Promise<Instance> = this.compile(spec, () => this.latest.get(spec.id) === promise).finally(() => this.loading.delete(key));
    this.loading.set(key, promise);
    this.latest.set(spec.id, promise);
    return promise;
  }

  /** Checks that code loads without making it current (for create/update validation). */
  async check(spec: Omit<LoadSpec, 'id' | 'version'>): Promise<void> {
    const worker = await this.loadWorker({ ...spec, id: '(check)', version: 0 });
    await worker.terminate();
  }

  /** Stops an id's instance once its calls in flight are done. */
  async unload(id: string): Promise<void> {
    const instance = this.instances.get(id);
    this.instances.delete(id);
    this.latest.delete(id);
    await instance?.retire();
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const instances = [...this.instances.values()];
    this.instances.clear();
    await Promise.all(instances.map((instance) => instance.retire()));
    const spares = this.spares.splice(0);
    await Promise.all(spares.map(async (spare) => (await spare.catch(() => undefined))?.terminate()));
  }

  private async compile(spec: LoadSpec, isLatest: () => boolean): Promise<Instance> {
    const first = await this.loadWorker(spec);
    if (this.disposed) {
      await first.terminate();
      throw new Error('the runtime is disposed');
    }
    if (!isLatest()) {
      // A newer version was asked for while this one loaded: that one decides what is current.
      await first.terminate();
      return this.latest.get(spec.id) ?? Promise.reject(new Error(`${spec.id} was unloaded while ${String(spec.version)} loaded`));
    }
    const instance = new Instance(spec, first, () => this.loadWorker(spec), {
      maxWorkers: this.options.maxWorkersPerInstance,
      idleMs: this.options.idleMs,
    });
    const previous = this.instances.get(spec.id);
    this.instances.set(spec.id, instance);
    if (previous) void previous.retire();
    return instance;
  }

  /** A worker with `spec`'s code loaded: a spare if one is ready, else a new one. */
  private async loadWorker(spec: LoadSpec): Promise<SandboxWorker> {
    const worker = await this.takeSpare();
    try {
      await worker.load(
        {
          code: spec.code,
          filename: spec.filename,
          projectDir: this.options.projectDir,
          npmAllowlist: [...this.options.npmAllowlist],
          maxLogBytes: this.options.maxLogBytes,
        },
        spec.id,
        this.options.loadTimeoutMs,
      );
      return worker;
    } catch (error) {
      await worker.terminate();
      throw error;
    }
  }

  private async takeSpare(): Promise<SandboxWorker> {
    const spare = this.spares.shift();
    this.refill();
    const worker = await (spare ?? this.boot());
    return worker.dead ? this.boot() : worker;
  }

  private async boot(): Promise<SandboxWorker> {
    const worker = new SandboxWorker({ memoryMb: this.options.memoryMb }, this.options.onLog);
    await worker.booted;
    return worker;
  }

  private refill(): void {
    while (!this.disposed && this.spares.length < this.options.spares) {
      const spare = this.boot();
      spare.catch(() => {});
      this.spares.push(spare);
    }
  }
}
