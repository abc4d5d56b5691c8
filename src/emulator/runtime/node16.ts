/**
 * Node 16 as the language user code runs on, as the platform's runtime (node-bt: Node 16.20, V8 9.4)
 * has it, in the sandbox process's realm: what later Nodes added is taken out, and what libraries
 * written for Node 16 assign on their own objects is made assignable. Both happen between SES's
 * repairIntrinsics() and hardenIntrinsics() (host.ts): the realm runs user code only, the host's own
 * code and SES took what they use before (SES's commons, Node's primordials), and nothing the
 * allowlisted packages need is removed (they were written for Node 16).
 */

/**
 * SES's lockdown() in its two halves, the realm made Node 16's between them: after the repair
 * (SES has taken what it uses), before the intrinsics are hardened.
 */
export function lockdownAsNode16(): void {
  repairIntrinsics({
    errorTaming: 'unsafe', // keep stacks: users need their file and line (prepareUserStack trims them)
    localeTaming: 'unsafe',
    consoleTaming: 'unsafe',
    overrideTaming: 'severe', // let user code assign e.g. `obj.toString = ...` on its own objects
    stackFiltering: 'verbose',
    errorTrapping: 'none',
    unhandledRejectionTrapping: 'none',
  });
  enableOverrides();
  removeLaterNodeIntrinsics();
  hardenIntrinsics();
}

/** The platform's Node version, as `process.version` and the messages say it. */
export const PLATFORM_NODE_VERSION = 'v16.20.2';

/**
 * What Node 16.20 (V8 9.4) lacks and the Node running the sandbox (>= 20.18) may have: each with
 * the Node major that brought it. (Kept, since Node 16 has them: Array.prototype.at and
 * String.prototype.at (16.6), Object.hasOwn and Error's `cause` (16.9), AbortSignal.timeout (16.14),
 * class static blocks and `#x in obj` (16.11).) Not taken out: ArrayBuffer's resize and transfer
 * (Node 20, 21), which SES itself defines, fixed, for its own use; and the RegExp `v` flag (syntax).
 */
export const NODE16_ABSENT: readonly (readonly [path: string, since: number])[] = [
  ['Array.prototype.findLast', 18],
  ['Array.prototype.findLastIndex', 18],
  ['Array.prototype.toSorted', 20],
  ['Array.prototype.toReversed', 20],
  ['Array.prototype.toSpliced', 20],
  ['Array.prototype.with', 20],
  ['TypedArray.prototype.findLast', 18],
  ['TypedArray.prototype.findLastIndex', 18],
  ['TypedArray.prototype.toSorted', 20],
  ['TypedArray.prototype.toReversed', 20],
  ['TypedArray.prototype.with', 20],
  ['String.prototype.isWellFormed', 20],
  ['String.prototype.toWellFormed', 20],
  ['Object.groupBy', 21],
  ['Map.groupBy', 21],
  ['Array.fromAsync', 22],
  ['Promise.withResolvers', 22],
  ['Promise.try', 23],
  ['Set.prototype.union', 22],
  ['Set.prototype.intersection', 22],
  ['Set.prototype.difference', 22],
  ['Set.prototype.symmetricDifference', 22],
  ['Set.prototype.isSubsetOf', 22],
  ['Set.prototype.isSupersetOf', 22],
  ['Set.prototype.isDisjointFrom', 22],
  ['RegExp.escape', 24],
  ['Math.sumPrecise', 24],
  ['Math.f16round', 24],
  ['Error.isError', 24],
  ['Intl.supportedValuesOf', 18],
  ['Intl.NumberFormat.prototype.formatRange', 19],
  ['Intl.NumberFormat.prototype.formatRangeToParts', 19],
  ['Intl.PluralRules.prototype.selectRange', 19],
];

/**
 * Globals of later Nodes, never handed to user code (host.ts endows what Node 16 has): listed for
 * the message a use of one gets. `Iterator` and `Float16Array` are intrinsics a compartment has of
 * its own, taken off each compartment's global (compartment.ts).
 */
export const NODE16_ABSENT_GLOBALS: readonly (readonly [name: string, since: number])[] = [
  ['structuredClone', 17],
  ['DOMException', 17],
  ['fetch', 18],
  ['Headers', 18],
  ['Request', 18],
  ['Response', 18],
  ['FormData', 18],
  ['Blob', 18],
  ['BroadcastChannel', 18],
  ['ReadableStream', 18],
  ['WritableStream', 18],
  ['TransformStream', 18],
  ['crypto', 19],
  ['CustomEvent', 19],
  ['File', 20],
  ['navigator', 21],
  ['WebSocket', 22],
  ['Iterator', 22],
  ['Float16Array', 24],
];

/** The realm's TypedArray: the prototype every typed array's prototype inherits. */
const TypedArray = Object.getPrototypeOf(Uint8Array) as object;

function resolveOwner(path: string): { owner: Record<string, unknown>; key: string } | undefined {
  const parts = path.split('.');
  const key = parts.pop()!;
  let owner: unknown = parts[0] === 'TypedArray' ? TypedArray : (globalThis as Record<string, unknown>)[parts[0]!];
  for (const part of parts.slice(1)) owner = (owner as Record<string, unknown> | undefined)?.[part];
  return typeof owner === 'object' || typeof owner === 'function'
    ? { owner: owner as Record<string, unknown>, key }
    : undefined;
}

/** Takes out of the realm what Node 16 lacks. Between repairIntrinsics() and hardenIntrinsics(). */
export function removeLaterNodeIntrinsics(): void {
  for (const [path] of NODE16_ABSENT) {
    const found = resolveOwner(path);
    if (found && Object.hasOwn(found.owner, found.key) && !Reflect.deleteProperty(found.owner, found.key))
      throw new Error(`the sandbox could not take ${path} out of the realm`);
  }
}

/**
 * The properties libraries written for Node 16 assign on objects of their own that inherit them
 * from a frozen prototype (`toString`, `name`, `message`, `valueOf`, `toJSON`). SES's
 * `overrideTaming: 'severe'` covers Object.prototype and a few others, not these. Not `constructor`:
 * Node's util.inspect names an object by its prototype's `constructor` data property, and an array
 * would print as `Object(1) [ 1 ]`; the assignment of it that libraries make (TypeScript's
 * `__extends`) is taken care of where their code loads (neutralize.ts).
 */
const OVERRIDDEN = ['toString', 'toLocaleString', 'valueOf', 'toJSON', 'name', 'message'];

/**
 * Every prototype of the realm's constructors (and the iterator and generator prototypes user code
 * reaches through them) gets, for each of OVERRIDDEN it holds as a data property, an accessor pair
 * as SES makes for its enablements: reading answers the value, assigning on an object that inherits
 * it defines the object's own property, assigning on the prototype itself throws. The prototype is
 * still frozen by hardenIntrinsics(); the accessors are frozen with it (their `originalValue` too).
 */
export function enableOverrides(): void {
  const prototypes = new Set<object>([TypedArray, (TypedArray as { prototype: object }).prototype]);
  for (const name of STANDARD_CONSTRUCTORS) {
    const prototype = (globalThis as Record<string, { prototype?: unknown } | undefined>)[name]?.prototype;
    if (typeof prototype === 'object' && prototype !== null) prototypes.add(prototype);
  }
  // (Object.prototype: SES's severe override taming enables all of it.)
  for (const prototype of prototypes) for (const key of OVERRIDDEN) enableOverride(prototype, key);
}

/** The language's constructors (Node's own classes are freeze-reachable.ts's, which does the same for them). */
const STANDARD_CONSTRUCTORS = [
  'Array',
  'ArrayBuffer',
  'SharedArrayBuffer',
  'DataView',
  'BigInt',
  'Boolean',
  'Number',
  'String',
  'Symbol',
  'Date',
  'RegExp',
  'Function',
  'Promise',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'FinalizationRegistry',
  'Error',
  'EvalError',
  'RangeError',
  'ReferenceError',
  'SyntaxError',
  'TypeError',
  'URIError',
  'AggregateError',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

function enableOverride(object: object, key: string): void {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  // A read-only one was never assignable: freezing adds no override mistake to it.
  if (!descriptor || !('value' in descriptor) || !descriptor.writable || !descriptor.configurable) return;
  const value = descriptor.value as unknown;
  const { get, set } = Object.getOwnPropertyDescriptor(
    {
      get [key]() {
        return value;
      },
      set [key](next: unknown) {
        if (this === object) throw new TypeError(`Cannot assign to read only property '${key}' of a shared prototype`);
        if (Object.hasOwn(this, key)) Reflect.set(this, key, next);
        else Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
    },
    key,
  )!;
  Object.defineProperty(get!, 'originalValue', { value });
  Object.defineProperty(object, key, { get, set, enumerable: descriptor.enumerable, configurable: true });
}

/** By the name a message shows: the first path with it (Array's before TypedArray's). */
const ARRIVED = new Map<string, string>();
for (const [path, since] of [...NODE16_ABSENT, ...NODE16_ABSENT_GLOBALS]) {
  const name = path.split('.').pop()!;
  if (!ARRIVED.has(name)) ARRIVED.set(name, `${path} arrived in Node ${since}`);
}

/**
 * A message about a name Node 16 lacks ("x.toSorted is not a function", "structuredClone is not
 * defined") with why: the platform runs Node 16, and the Node that brought the name. Others as they are.
 */
export function withPlatformHint(message: string): string {
  const name =
    /\.([A-Za-z]+) is not a function\b/.exec(message)?.[1] ??
    /^([A-Za-z]+) is not (?:defined|a function|a constructor)\b/.exec(message)?.[1];
  const arrived = name === undefined ? undefined : ARRIVED.get(name);
  return arrived ? `${message} (the platform runs Node 16: ${arrived})` : message;
}
