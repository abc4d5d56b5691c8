import { promisify } from 'node:util';
import { resetProcessDefaults } from './process-lockdown.js';

/**
 * The timers user code gets. Node's own Timeout and Immediate objects are links of the process's
 * timer lists: from one, code walks to every other pending timer (another call's callback and
 * arguments) and to the timers Node sets for its own sockets. So user code gets a handle of its own
 * instead; Node's timer stays in a private field, and callbacks run with the handle as `this`.
 */
interface NodeTimer {
  ref(): unknown;
  unref(): unknown;
  hasRef(): boolean;
  refresh?: () => unknown;
}

export class TimerHandle {
  readonly #id: number;
  readonly #timer: NodeTimer;
  readonly #clear: () => void;

  constructor(id: number, timer: NodeTimer, clear: () => void) {
    this.#id = id;
    this.#timer = timer;
    this.#clear = clear;
    Object.freeze(this);
  }

  ref(): this {
    this.#timer.ref();
    return this;
  }

  unref(): this {
    this.#timer.unref();
    return this;
  }

  hasRef(): boolean {
    return this.#timer.hasRef();
  }

  refresh(): this {
    this.#timer.refresh?.();
    return this;
  }

  close(): this {
    this.#clear();
    return this;
  }

  [Symbol.toPrimitive](): number {
    return this.#id;
  }
}

type Callback = (...args: unknown[]) => unknown;

/**
 * Runs a timer's callback; then puts back the process-wide defaults (process-lockdown.ts), now and
 * once its microtasks have run: a top-level timer runs with no call around it to put them back, and
 * what it set would reach the calls that run meanwhile (another version's, another tenant's fork).
 */
function fire(callback: Callback, handle: TimerHandle, args: unknown[]): unknown {
  try {
    return Reflect.apply(callback, handle, args);
  } finally {
    resetProcessDefaults();
    setImmediate(resetProcessDefaults);
  }
}

/**
 * `setTimeout` & co. for user code. `own(clear)` is told of every timer set, so that the call that
 * set it can clear it when it ends; it answers false when that call is already over, and the timer
 * is then cleared at once (work a call left behind cannot start timers). `scope()` names whose
 * timer it is (the call, or the version's top-level code): ids are numbered per scope, and an id
 * clears only a timer of the scope that uses it, so that no call can clear, or count, another's.
 */
export function sandboxTimers(own: (clear: () => void) => boolean, scope: () => object | undefined) {
  const books = new WeakMap<object, { seq: number; byId: Map<number, TimerHandle> }>();
  const unowned = {};
  const bookOf = () => {
    const key = scope() ?? unowned;
    let book = books.get(key);
    if (!book) books.set(key, (book = { seq: 0, byId: new Map() }));
    return book;
  };

  const make = <T extends NodeTimer>(
    set: (fire: Callback, ...rest: unknown[]) => T,
    cancel: (timer: T) => void,
    repeats: boolean,
  ) =>
    function (callback: unknown, ...rest: unknown[]): TimerHandle {
      if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function.');
      const book = bookOf();
      const { byId } = book;
      const id = ++book.seq;
      const forget = () => byId.delete(id);
      // eslint-disable-next-line prefer-const -- the callback below refers to it
      let handle: TimerHandle;
      const timer = set(
        (...args: unknown[]) => {
          if (!repeats) forget();
          return fire(callback as Callback, handle, args);
        },
        ...rest,
      );
      handle = new TimerHandle(id, timer, () => {
        cancel(timer);
        forget();
      });
      byId.set(id, handle);
      if (!own(() => handle.close())) handle.close();
      return handle;
    };

  /** Clears a handle, or the id a handle converts to (as Node's clearTimeout accepts both): of this scope only. */
  const clear = (handle: unknown): void => {
    if (handle instanceof TimerHandle) handle.close();
    else if (typeof handle === 'number' || typeof handle === 'string') bookOf().byId.get(Number(handle))?.close();
  };

  const setTimeoutFacade = make<NodeJS.Timeout>(
    (fire, ms, ...args) => setTimeout(fire, ms as number, ...args),
    clearTimeout,
    false,
  );
  const setIntervalFacade = make<NodeJS.Timeout>(
    (fire, ms, ...args) => setInterval(fire, ms as number, ...args),
    clearInterval,
    true,
  );
  const setImmediateFacade = make<NodeJS.Immediate>(
    (fire, ...args) => setImmediate(fire, ...args),
    clearImmediate,
    false,
  );
  // util.promisify(setTimeout) as Node has it. A new function per read, as promisify() marks the one
  // it gets: no object shared between compartments.
  Object.defineProperty(setTimeoutFacade, promisify.custom, {
    get: () => (ms?: number, value?: unknown) => new Promise((resolve) => setTimeoutFacade(resolve, ms, value)),
  });
  Object.defineProperty(setImmediateFacade, promisify.custom, {
    get: () => (value?: unknown) => new Promise((resolve) => setImmediateFacade(resolve, value)),
  });

  return {
    setTimeout: setTimeoutFacade,
    clearTimeout: clear,
    /** `AbortSignal.timeout` on these timers: Node's sets one no call owns, and a chain of them outlived its call. */
    timeoutSignal(delay: unknown): AbortSignal {
      // Node's errors, codes included.
      if (typeof delay !== 'number')
        throw Object.assign(new TypeError('The "delay" argument must be of type number.'), {
          code: 'ERR_INVALID_ARG_TYPE',
        });
      if (!Number.isInteger(delay) || delay < 0 || delay > 0xffff_ffff)
        throw Object.assign(
          new RangeError(
            `The value of "delay" is out of range. It must be an integer >= 0 && <= 4294967295. Received ${delay}`,
          ),
          { code: 'ERR_OUT_OF_RANGE' },
        );
      const controller = new AbortController();
      // As Node's: the timer does not keep the process up.
      setTimeoutFacade(
        () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
        delay,
      ).unref();
      return controller.signal;
    },
    setInterval: setIntervalFacade,
    clearInterval: clear,
    setImmediate: setImmediateFacade,
    clearImmediate: clear,
  };
}
