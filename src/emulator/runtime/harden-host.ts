/**
 * Makes the host objects user code can reach immutable, in the sandbox process, after lockdown().
 *
 * lockdown() freezes the JavaScript intrinsics but not Node's own classes. User code reaches many
 * of them (Buffer, EventTarget, timers, and every class of the allowlisted built-ins), and the
 * sandbox's own machinery inherits from the same prototypes: patch EventEmitter.prototype.emit and
 * the next `process.emit(...)` hands user code the sandbox process's `process`. So every prototype and
 * constructor reachable from what user code is given is frozen here.
 *
 * Freezing a prototype breaks code that assigns an instance property shadowing one of its data
 * properties (`this._events = ...` under a frozen `_events`: the "override mistake"). As SES does
 * for the intrinsics, each such data property becomes an accessor whose setter defines the
 * property on the instance instead.
 *
 * Instances (an Agent, a hash) are left mutable: only their prototype chains are frozen, so user
 * code can only ever change objects that are its own.
 */
export function hardenHost(roots: readonly unknown[]): void {
  const seen = new Set<object>();
  const pending: [object, Role][] = [];
  const add = (value: unknown, role: Role) => {
    if ((typeof value === 'object' && value !== null) || typeof value === 'function')
      pending.push([value as object, role]);
  };
  for (const root of roots) add(root, classify(root));

  while (pending.length > 0) {
    const [object, role] = pending.pop()!;
    if (seen.has(object)) continue;
    seen.add(object);
    // An instance is the user's to change; what it inherits is not.
    add(Object.getPrototypeOf(object), 'prototype');
    if (role === 'instance') continue;

    for (const key of Reflect.ownKeys(object)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(object, key)!;
      if ('value' in descriptor) {
        const value = descriptor.value as unknown;
        add(value, key === 'prototype' ? 'prototype' : classify(value));
      } else {
        add(descriptor.get, 'type');
        add(descriptor.set, 'type');
        // A lazy member of a module namespace (crypto.webcrypto, stream.promises) is part of it.
        if (role === 'namespace' && descriptor.get) add(safeGet(object, key), 'namespace');
      }
    }
    // Every object locked here may be some instance's prototype (a plain object can be one too).
    if (!Object.isFrozen(object)) lock(object);
  }
}

type Role = 'type' | 'prototype' | 'namespace' | 'instance';

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
 * flag) stays writable if it holds a primitive, which no one can turn into a capability.
 */
function lock(object: object): void {
  for (const key of Reflect.ownKeys(object)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key)!;
    if (!('value' in descriptor)) {
      if (descriptor.configurable) Object.defineProperty(object, key, { configurable: false });
      continue;
    }
    const value = descriptor.value as unknown;
    if (descriptor.configurable && descriptor.writable) {
      Object.defineProperty(object, key, {
        get() {
          return value;
        },
        set(this: object, next: unknown) {
          if (this === object)
            throw new TypeError(`Cannot assign to read only property '${String(key)}' of a sandbox host object`);
          Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
        enumerable: descriptor.enumerable ?? false,
        configurable: false,
      });
    } else if (descriptor.configurable || (descriptor.writable && isCapability(value))) {
      Object.defineProperty(object, key, { writable: false, configurable: false });
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
