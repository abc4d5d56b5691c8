/**
 * What user code gets instead of Node's modules where a module would hand it a capability.
 *
 * `https` is https-facade.ts: the sandbox makes no connection of its own, its requests go out from
 * the emulator. `crypto` is Node's without the engine and FIPS switches (`setEngine` makes the
 * process dlopen() a file). Everything handed out is hardened by the host afterwards (freeze-reachable.ts).
 */
import crypto from 'node:crypto';

/** The switches of `crypto` that reach native code or process-wide state. */
const CRYPTO_DENIED = new Set(['setEngine', 'setFips', 'getFips', 'fips', 'secureHeapUsed']);

/** Who started a piece of work: a call, or a version's top-level code; `finished` once it is over. */
export interface WorkOwner {
  finished: boolean;
  /** Its thread-pool work under way (a finished call's still counts until the work is done). */
  jobs: number;
}

/** Work that can end with its owner: what to do when it does (clear a timer, destroy a request). */
export interface RequestOwner extends WorkOwner {
  timers: Set<() => void>;
}

/** A thread-pool job begun: counted against its starter until `done`. */
function begin(starter: WorkOwner | undefined): { done: () => void } {
  if (starter) starter.jobs++;
  let open = true;
  return {
    done: () => {
      if (open && starter) starter.jobs--;
      open = false;
    },
  };
}

/**
 * `require('crypto')` as user code sees it. Work on the thread pool belongs to the call that
 * starts it, as its timers do: once the call is over its callbacks and promises are dropped, and
 * no more is started, so that no chain of them (each callback starting the next) outlives it; work
 * still running when the call returns is counted (`jobs`), for the process to be replaced.
 * Every function is so wrapped: whichever argument Node takes for the callback (pbkdf2, sign...)
 * is one of the wrapped ones; a call with no function among its arguments is synchronous.
 */
export function cryptoFacade(owner: () => WorkOwner | undefined): object {
  const facade = ownedModule(crypto, owner, CRYPTO_DENIED);
  const subtle = ownedPromises(crypto.webcrypto.subtle, owner);
  facade.subtle = subtle;
  facade.webcrypto = {
    subtle,
    getRandomValues: <T extends ArrayBufferView | null>(array: T): T =>
      crypto.webcrypto.getRandomValues(array as never) as T,
    randomUUID: () => crypto.webcrypto.randomUUID(),
    CryptoKey: crypto.webcrypto.CryptoKey,
    [Symbol.toStringTag]: 'Crypto',
  };
  return facade;
}

/**
 * A module's members, each function (classes aside) wrapped as `crypto`'s are: what it starts on
 * the thread pool (zlib's gzip, crypto's pbkdf2) belongs to the call that starts it. `denied` are left out.
 */
export function ownedModule(
  module: object,
  owner: () => WorkOwner | undefined,
  denied: ReadonlySet<string> = new Set(),
): Record<string, unknown> {
  const facade: Record<string, unknown> = {};
  for (const name of Object.keys(module)) {
    if (denied.has(name)) continue;
    const value = (module as Record<string, unknown>)[name];
    // Classes (Hash, KeyObject, Gzip...) are constructed, not called with a callback.
    facade[name] = typeof value === 'function' && /^[a-z]/.test(name) ? ownedCallbacks(value as Work, owner) : value;
  }
  return facade;
}

type Work = (...args: unknown[]) => unknown;

function overError(): Error {
  return new Error('The call that started this work has returned: work on the thread pool belongs to its call.');
}

/** `work` whose callbacks (its function arguments) run only while their starter is live. */
function ownedCallbacks(work: Work, owner: () => WorkOwner | undefined): Work {
  const owned = function (this: unknown, ...args: unknown[]) {
    if (!args.some((arg) => typeof arg === 'function')) return Reflect.apply(work, this, args);
    const starter = owner();
    if (!starter || starter.finished) throw overError();
    const job = begin(starter);
    const guarded = args.map((arg) =>
      typeof arg === 'function'
        ? function (this: unknown, ...results: unknown[]) {
            job.done();
            if (!starter?.finished) return Reflect.apply(arg, this, results);
          }
        : arg,
    );
    try {
      const result = Reflect.apply(work, this, guarded);
      // What answers a callback returns nothing; a function that returned something ran synchronously.
      if (result !== undefined) job.done();
      return result;
    } catch (error) {
      // Refused by Node (a bad argument): nothing was started.
      job.done();
      throw error;
    }
  };
  // What util.promisify reads of the original (generateKeyPair's names of its results), and its name and arity.
  for (const key of [...Object.getOwnPropertySymbols(work), 'name', 'length'])
    Object.defineProperty(owned, key, Object.getOwnPropertyDescriptor(work, key)!);
  return owned;
}

/** SubtleCrypto's methods, each promise settling only while the call that asked is live. */
function ownedPromises(subtle: object, owner: () => WorkOwner | undefined): object {
  const facade: Record<string, unknown> = { [Symbol.toStringTag]: 'SubtleCrypto' };
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(subtle))) {
    const method = (subtle as Record<string, unknown>)[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    facade[name] = (...args: unknown[]) => {
      const starter = owner();
      if (!starter || starter.finished) return Promise.reject(overError());
      const job = begin(starter);
      return new Promise((resolve, reject) => {
        (Reflect.apply(method, subtle, args) as Promise<unknown>).then(
          (value) => {
            job.done();
            if (!starter?.finished) resolve(value);
          },
          (error: unknown) => {
            job.done();
            if (!starter?.finished) reject(error);
          },
        );
      });
    };
    Object.defineProperty(facade[name], 'name', { value: name });
  }
  return facade;
}
