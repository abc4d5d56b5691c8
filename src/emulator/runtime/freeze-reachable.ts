/**
 * Makes the host objects user code can reach immutable, in the sandbox process, after lockdown():
 * the whole graph reachable from what user code is handed, not a list of known objects.
 *
 * lockdown() freezes the JavaScript intrinsics but not Node's own classes. User code reaches many
 * of them (Buffer, EventTarget, timers, and every class of the allowlisted built-ins), and the
 * sandbox's own machinery inherits from the same prototypes: patch EventEmitter.prototype.emit and
 * the next `process.emit(...)` hands user code the sandbox process's `process`. And the code of
 * every owner of a tenant shares the process: an object one could change, another would see. So
 * everything reachable from `reachable` is frozen: namespaces, types, prototypes, the objects they
 * hold (an agent, an array of names) and what their getters answer (a module's lazy members,
 * `util.inspect.defaultOptions`), and the accessor functions made here.
 *
 * Freezing a prototype breaks code that assigns an instance property shadowing one of its data
 * properties (`this._events = ...` under a frozen `_events`: the "override mistake"). As SES does
 * for the intrinsics, each such data property becomes an accessor whose setter defines the
 * property on the instance instead.
 *
 * `discoveryOnly` are instances made only to find prototypes user code reaches through its own
 * instances (a timer, Node's modules behind the facades): their prototype chains are frozen, their
 * own state is left alone (user code never holds them).
 */
export function freezeReachable(reachable: readonly unknown[], discoveryOnly: readonly unknown[] = []): WritableSlot[] {
  const seen = new Set<object>();
  const slots: WritableSlot[] = [];
  const pending: [object, Role][] = [];
  const add = (value: unknown, role: Role) => {
    if ((typeof value === 'object' && value !== null) || typeof value === 'function')
      pending.push([value as object, role]);
  };
  const drain = (shared: boolean) => {
    while (pending.length > 0) {
      const [object, role] = pending.pop()!;
      if (seen.has(object)) continue;
      seen.add(object);
      // The realm's first Error (the one Node's own errors extend; SES's are frozen by lockdown): V8
      // reads its stackTraceLimit and prepareStackTrace as data properties for every error of the
      // process, so they stay data (what the host installed), frozen as they are.
      const stackSwitches = typeof object === 'function' && Object.hasOwn(object, 'captureStackTrace');
      // An instance user code made is its own to change; what it inherits is not. (A class's parent
      // class is a type, whose statics are as reachable as its own.)
      const parent = Object.getPrototypeOf(object) as unknown;
      add(parent, typeof parent === 'function' ? 'type' : 'prototype');
      if (role === 'instance') continue;

      for (const key of Reflect.ownKeys(object)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(object, key)!;
        if ('value' in descriptor) {
          const value = descriptor.value as unknown;
          if (key === 'prototype') add(value, 'prototype');
          else add(value, shared ? heldRole(value) : classify(value));
        } else {
          add(descriptor.get, 'type');
          add(descriptor.set, 'type');
          // A lazy member of a module or class (crypto.webcrypto, stream.promises, inspect.defaultOptions)
          // is part of it.
          if (role !== 'prototype' && descriptor.get) add(safeGet(object, key), shared ? 'namespace' : 'instance');
        }
      }
      // Every object locked here may be some instance's prototype (a plain object can be one too).
      if (stackSwitches) Object.freeze(object);
      else if (!Object.isFrozen(object)) lock(object, shared && role !== 'prototype', slots);
    }
  };
  for (const root of reachable) add(root, heldRole(root));
  drain(true);
  for (const root of discoveryOnly) add(root, classify(root));
  drain(false);
  return slots;
}

/**
 * A property left writable on a prototype (non-configurable: it could not become an accessor), and
 * the primitive it held: what user code could change, or pin, for every instance of the process.
 */
export interface WritableSlot {
  object: object;
  key: PropertyKey;
  value: unknown;
}

type Role = 'type' | 'prototype' | 'namespace' | 'instance';

/** What an object held by a reachable one is: shared by every owner, so never an instance left mutable. */
function heldRole(value: unknown): Role {
  return typeof value === 'function' ? 'type' : 'namespace';
}

/** Functions are types; plain objects are namespaces (module exports); anything else is an instance. */
function classify(value: unknown): Role {
  if (typeof value === 'function') return 'type';
  if (typeof value !== 'object' || value === null) return 'instance';
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null ? 'namespace' : 'instance';
}

/**
 * Object.freeze, except where freezing would break the instances that inherit from the object:
 * a writable data property becomes an accessor whose setter gives the instance its own property;
 * a writable one that cannot be reconfigured (Node defines a few, e.g. EventEmitter's kCapture
 * flag) stays writable on a prototype if it holds a primitive, which no one can turn into a
 * capability: it is listed in `slots`, for the host to put back (and check) around every call. On a `shared` object (a module's, a class's own) nothing stays writable: Node's
 * sealed settings (`util.inspect.defaultOptions`) are process-wide state.
 */
function lock(object: object, shared = false, slots: WritableSlot[] = []): void {
  for (const key of Reflect.ownKeys(object)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key)!;
    if (!('value' in descriptor)) {
      if (descriptor.configurable) Object.defineProperty(object, key, { configurable: false });
      continue;
    }
    const value = descriptor.value as unknown;
    if (descriptor.configurable && descriptor.writable) {
      // Methods: no `prototype` object of their own to leave unfrozen; frozen, as all user code reaches.
      const accessors = {
        get() {
          return value;
        },
        set(this: object, next: unknown) {
          if (this === object)
            throw new TypeError(`Cannot assign to read only property '${String(key)}' of a sandbox host object`);
          Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
      };
      Object.defineProperty(object, key, {
        get: Object.freeze(accessors.get),
        set: Object.freeze(accessors.set),
        enumerable: descriptor.enumerable ?? false,
        configurable: false,
      });
    } else if (descriptor.configurable || (descriptor.writable && (shared || isCapability(value)))) {
      Object.defineProperty(object, key, { writable: false, configurable: false });
    } else if (descriptor.writable) {
      slots.push({ object, key, value });
    }
  }
  Object.preventExtensions(object);
}

function isCapability(value: unknown): boolean {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function safeGet(object: object, key: PropertyKey): unknown {
  try {
    return Reflect.get(object, key);
  } catch {
    return undefined;
  }
}
