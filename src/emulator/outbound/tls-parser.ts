import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnDying } from '../../lib/parent-death.js';

/** The options of user code's `https.request` that are TLS material: what a context is made of. */
export const MATERIAL_OPTIONS = ['ca', 'cert', 'key', 'passphrase', 'ciphers', 'minVersion', 'maxVersion'] as const;
export type TlsMaterial = Partial<Record<(typeof MATERIAL_OPTIONS)[number], string>>;

/** The parse child's answer (tls-parse-child.ts): the key decrypted, or the error Node gave. */
export type TlsOutcome = { ok: true; key?: string } | { ok: false; code: string; message: string };
export type TlsParsed = TlsOutcome & { id: number };

/**
 * How long one set of material may take to parse, in CPU time. A CA bundle of 780 certificates takes 110 ms; an
 * encrypted key, the milliseconds of the PBKDF2 count its tool chose (2,048 for OpenSSL and Node).
 */
export const TLS_PARSE_MS = 2000;
/** The wall time a parse may take, in budgets, when the machine's load starves it of CPU. */
const MAX_WALL_FACTOR = 4;
/** Material that failed or ran out of time, remembered per pool (the most recent). */
const REFUSALS_KEPT = 1024;
/**
 * Distinct sets of material a pool may have waiting or being parsed at once. Each may cost the
 * parse process TLS_PARSE_MS of CPU, and a pool's byte budget is charged for a timeout only once
 * it happened: without a bound, 1 MB of 430-byte keys given at once queued 80 min of a core's work.
 */
export const PARSES_PER_POOL = 2;
/** The parse process stops after this long with nothing to parse (its next parse starts another, ~50 ms). */
const IDLE_MS = 30_000;

interface Job {
  pool: string;
  /** The material's hash within its pool. */
  key: string;
  material: TlsMaterial;
  settle: (outcome: TlsOutcome) => void;
}

/** An error given to user code: Node's code, or the emulator's ERR_SVC_TLS_*. */
export function tlsError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Parses user code's TLS material in a process of its own, one set at a time, the pools (tenants)
 * taking turns; a parse that takes longer than TLS_PARSE_MS is stopped by killing the process.
 * Material that failed, or ran out of time, is remembered by its hash and refused at once when
 * given again (a failed context is not kept, and its work would otherwise be paid again and again).
 */
export class TlsParser {
  private child: { process: ChildProcess; ready: Promise<boolean> } | undefined;
  /** Jobs waiting, per pool: the pools take turns (Map order, the one just served moved last). */
  private readonly queues = new Map<string, Job[]>();
  /** The job being parsed: `timer` set once the child has its material. */
  private current: { job: Job; id: number; timer?: NodeJS.Timeout } | undefined;
  private readonly pending = new Map<string, Promise<TlsOutcome>>();
  private readonly refused = new Map<string, Error>();
  private idle: NodeJS.Timeout | undefined;
  private seq = 0;
  private closed = false;

  /** The error that material of `pool` was refused with before, if it was. */
  refusal(pool: string, key: string): Error | undefined {
    const refused = this.refused.get(`${pool}\u0000${key}`);
    if (!refused) return undefined;
    return tlsError(
      'ERR_SVC_TLS_REFUSED',
      `This TLS material (ca, cert, key, passphrase) was refused before: ${refused.message}`,
    );
  }

  /** Material of `pool` that failed (here, or where its context was made): refused at once from now on. */
  remember(pool: string, key: string, error: Error): void {
    this.refused.set(`${pool}\u0000${key}`, error);
    if (this.refused.size > REFUSALS_KEPT) this.refused.delete(this.refused.keys().next().value!);
  }

  /**
   * Throws ERR_SVC_TLS_BUSY when `pool` has PARSES_PER_POOL sets of material waiting or being
   * parsed: a new one is refused at once (not remembered: it may be given again later).
   */
  admit(pool: string): void {
    let waiting = 0;
    for (const id of this.pending.keys()) if (id.startsWith(`${pool}\u0000`)) waiting++;
    if (waiting < PARSES_PER_POOL) return;
    throw tlsError(
      'ERR_SVC_TLS_BUSY',
      `The request was not sent: ${PARSES_PER_POOL} sets of TLS material (ca, cert, key, passphrase) of this ` +
        'tenant are being parsed at once; send it again once they are (reuse the same options: their context is kept).',
    );
  }

  /** Whether the same material of `pool` is being parsed now (a second request waits for it, at no cost). */
  parsing(pool: string, key: string): boolean {
    return this.pending.has(`${pool}\u0000${key}`);
  }

  /** The material parsed: the key decrypted (undefined when none was given). Rejects with Node's error or ERR_SVC_TLS_TIMEOUT. */
  async parse(pool: string, key: string, material: TlsMaterial): Promise<string | undefined> {
    const id = `${pool}\u0000${key}`;
    let outcome = this.pending.get(id);
    if (!outcome) {
      outcome = new Promise<TlsOutcome>((settle) => {
        const queue = this.queues.get(pool) ?? [];
        queue.push({ pool, key, material, settle });
        this.queues.set(pool, queue);
        this.next();
      }).finally(() => this.pending.delete(id));
      this.pending.set(id, outcome);
    }
    const parsed = await outcome;
    if (parsed.ok) return parsed.key;
    throw tlsError(parsed.code, parsed.message);
  }

  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) for (const job of queue) job.settle(stopped());
    this.queues.clear();
    this.stopChild();
    if (this.current) this.finish(stopped());
  }

  private next(): void {
    if (this.current || this.closed) return;
    const [pool, queue] = this.queues.entries().next().value ?? [];
    if (pool === undefined || !queue) {
      clearTimeout(this.idle);
      this.idle = setTimeout(() => this.stopChild(), IDLE_MS).unref();
      return;
    }
    const job = queue.shift()!;
    this.queues.delete(pool);
    if (queue.length > 0) this.queues.set(pool, queue);
    clearTimeout(this.idle);
    const id = ++this.seq;
    const child = this.started();
    this.current = { job, id };
    // The budget runs from when the child has the material: a boot is not the material's time.
    void child.ready.then((ready) => {
      if (this.current?.id !== id) return;
      if (!ready) return this.finish(unavailable());
      child.process.send({ id, ...job.material });
      this.watch(id, child.process.pid, cpuMs(child.process.pid), performance.now() + TLS_PARSE_MS * MAX_WALL_FACTOR);
    });
  }

  /**
   * Stops the parse of job `id` once it has used TLS_PARSE_MS of CPU (where /proc tells; else of
   * wall time): a parse starved by a loaded machine is given its time, up to MAX_WALL_FACTOR times
   * the budget of wall time, rather than remembered as too slow.
   */
  private watch(
    id: number,
    pid: number | undefined,
    startCpu: number | undefined,
    deadline: number,
    wait = TLS_PARSE_MS,
  ): void {
    if (this.current?.id !== id) return;
    this.current.timer = setTimeout(() => {
      const used = startCpu === undefined ? undefined : (cpuMs(pid) ?? startCpu) - startCpu;
      const now = performance.now();
      if (used !== undefined && used < TLS_PARSE_MS && now < deadline)
        return this.watch(id, pid, startCpu, deadline, Math.max(50, Math.min(TLS_PARSE_MS - used, deadline - now)));
      this.stopChild();
      this.finish({
        ok: false,
        code: 'ERR_SVC_TLS_TIMEOUT',
        message:
          `Parsing this TLS material (ca, cert, key, passphrase) took longer than ${TLS_PARSE_MS / 1000} s ` +
          '(an encrypted key whose PBKDF2 iteration count is too high?): the emulator stopped it.',
      });
    }, wait);
  }

  /** The current job's outcome: given to its requests, remembered if it failed, and the next job started. */
  private finish(outcome: TlsOutcome): void {
    const current = this.current;
    if (!current) return;
    clearTimeout(current.timer);
    this.current = undefined;
    const { job } = current;
    if (!outcome.ok && outcome.code !== UNAVAILABLE)
      this.remember(job.pool, job.key, tlsError(outcome.code, outcome.message));
    job.settle(outcome);
    this.next();
  }

  private started(): { process: ChildProcess; ready: Promise<boolean> } {
    if (this.child && this.child.process.exitCode === null && this.child.process.signalCode === null) return this.child;
    const process = spawnDying(globalThis.process.execPath, ['--max-old-space-size=64', parseScript()], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: {},
      cwd: path.parse(globalThis.process.cwd()).root,
      windowsHide: true,
    });
    const ready = new Promise<boolean>((resolve) => {
      process.once('exit', () => resolve(false));
      process.once('error', () => resolve(false));
      process.on('message', (message: TlsParsed | { ready: true }) => {
        if ('ready' in message) return resolve(true);
        if (this.current?.id === message.id) this.finish(message);
      });
    });
    process.once('exit', () => {
      if (this.child?.process === process) this.child = undefined;
      // It died under a parse (out of memory on what it was given): that material is refused.
      if (this.current?.timer && !this.closed)
        this.finish({ ok: false, code: 'ERR_SVC_TLS_INVALID', message: 'The TLS material could not be parsed.' });
      else if (this.current && !this.closed) this.finish(unavailable());
    });
    process.unref();
    process.channel?.unref();
    this.child = { process, ready };
    return this.child;
  }

  private stopChild(): void {
    clearTimeout(this.idle);
    const child = this.child;
    this.child = undefined;
    child?.process.removeAllListeners('exit');
    child?.process.kill('SIGKILL');
  }
}

/** The code of a parse that did not happen (the emulator stopping, the parse process not starting): not remembered. */
const UNAVAILABLE = 'ERR_SVC_TLS_UNAVAILABLE';

function stopped(): TlsOutcome {
  return { ok: false, code: UNAVAILABLE, message: 'The request was not sent: the emulator is stopping.' };
}

function unavailable(): TlsOutcome {
  return {
    ok: false,
    code: UNAVAILABLE,
    message: 'The request was not sent: its TLS material could not be parsed now.',
  };
}

/** A process's CPU time (user and system) in ms, from /proc (Linux, 100 ticks a second); undefined elsewhere. */
function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** The parse child's script, built beside this file (or, run from src by the tests, in dist). */
function parseScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.join(here, 'tls-parse-child.js');
  if (existsSync(beside)) return beside;
  return path.join(here.replace(`${path.sep}src${path.sep}`, `${path.sep}dist${path.sep}`), 'tls-parse-child.js');
}
