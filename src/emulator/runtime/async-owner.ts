/**
 * Which call (or code version) the code running now works for, across its awaits, timers and
 * callbacks: an AsyncLocalStorage whose store user code can neither read nor forge.
 *
 * Node's AsyncLocalStorage keeps its store as a symbol-keyed property of every async resource, a
 * promise included: user code lists the symbol with Object.getOwnPropertySymbols, and by writing a
 * store it read at the top level onto a promise of a call, had that call's work run as the version's
 * own, outliving the call. Here the store of each resource sits in a WeakMap of this module, set
 * when Node creates the resource (from the resource running then) and read off the resource running
 * now: nothing of it is a property.
 */
import { createHook, executionAsyncResource } from 'node:async_hooks';

export class AsyncOwner<T extends object> {
  private readonly stores = new WeakMap<object, T>();

  constructor() {
    const stores = this.stores;
    createHook({
      init(_asyncId, _type, _triggerAsyncId, resource: object) {
        const store = stores.get(executionAsyncResource());
        if (store !== undefined) stores.set(resource, store);
      },
    }).enable();
  }

  /** What the code running now works for, if anything. */
  get(): T | undefined {
    return this.stores.get(executionAsyncResource());
  }

  /** Runs `fn` for `store`: the async resources it creates carry the store on. */
  run<R>(store: T, fn: () => R): R {
    const resource = executionAsyncResource();
    const previous = this.stores.get(resource);
    this.stores.set(resource, store);
    try {
      return fn();
    } finally {
      if (previous === undefined) this.stores.delete(resource);
      else this.stores.set(resource, previous);
    }
  }
}
