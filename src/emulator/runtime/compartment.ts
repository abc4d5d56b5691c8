/**
 * Loading one code version into a Compartment of its own: the CommonJS wrapper, the platform's error
 * classes, and a `require` that serves the allowlist only. Runs in the sandbox process, after lockdown().
 */
import { readFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { defineConstructorInExtends, neutralizeSesTriggers } from './neutralize.js';
import {
  BUILTIN_ALLOWLIST,
  ERRORS_MODULE,
  type InitRequest,
  type LoadRequest,
  type SerializedError,
} from './protocol.js';
import { MODULE_PARAMETERS, MODULE_PREFIX, describeType, locate, sourceNames, userSources } from './stacks.js';
import { USER_ERRORS_SOURCE } from './platform-errors.js';
import { NODE16_ABSENT_GLOBALS, withPlatformHint } from './node16.js';

export type UserErrors = Record<string, new (...args: never[]) => Error>;

export interface Loaded {
  fn: (req: unknown) => unknown;
  errors: UserErrors;
  filename: string;
}

const EVALUATE_OPTIONS = {
  // Direct eval inside a compartment is the compartment's own confined eval. ("import(" and "<!--"
  // inside strings and comments are handled by neutralizeSesTriggers, without changing meaning.)
  __rejectSomeDirectEvalExpressions__: false,
};

/** Compiles and runs a module; answers its exported function, or why it does not load. */
export function loadCode(
  request: LoadRequest,
  config: InitRequest,
  modules: Record<string, unknown>,
  globals: Record<string, unknown>,
  console: unknown,
): { loaded: Loaded } | { error: SerializedError } {
  const { code, filename } = request;
  // A debugger's breakpoints bind to the URL the code is compiled under (the user's own file, with
  // `svc serve --inspect`); stacks and problems name it by `filename` all the same (stacks.ts).
  const sourceUrl = request.sourceUrl ?? filename;
  try {
    // As Node compiles a CommonJS module, but strict as the compartment runs it: exact lines, columns and
    // messages for every syntax error, the strict-mode ones (`with`, `010`) too. The directive has a line of
    // its own, taken back by lineOffset, so that the columns of the user's line 1 stay theirs.
    vm.compileFunction(`'use strict';\n${code}`, MODULE_PARAMETERS, { filename, lineOffset: -1 });
  } catch (error) {
    return { error: syntaxError(error as Error, filename) };
  }
  userSources.add(filename);
  if (sourceUrl !== filename) sourceNames.set(sourceUrl, filename);
  try {
    // A new compartment's Math.random and Date.now are disabled (the realm's work), and SES leaves out
    // the float arrays (a NaN side channel, of no weight here): Node code expects all of them.
    // The host gives each version a Date of its own (user-date.ts: its tenant's clock) among `globals`.
    const endowed = { console, Date, ...globals, Math, Intl, Float32Array, Float64Array };
    const compartment = new Compartment({ __options__: true, globals: endowed, name: filename });
    // Node's `global` is the global object itself.
    compartment.globalThis.global = compartment.globalThis;
    // The language's globals of later Nodes a compartment has of its own (node16.ts).
    for (const [name] of NODE16_ABSENT_GLOBALS) Reflect.deleteProperty(compartment.globalThis, name);
    const errors = compartment.evaluate(USER_ERRORS_SOURCE) as UserErrors;
    Object.assign(compartment.globalThis, errors);
    // Same line numbers as the file: the wrapper opens on the code's first line.
    const factory = compartment.evaluate(
      `${MODULE_PREFIX}${neutralizeSesTriggers(defineConstructorInExtends(code))}\n})\n//# sourceURL=${sourceUrl}`,
      EVALUATE_OPTIONS,
    ) as (...args: unknown[]) => void;
    const module = { exports: {} as unknown };
    // `require('process')` is the version's own `process`, as the global is.
    const require = makeRequire(compartment, errors, { ...modules, process: globals.process }, config);
    Reflect.apply(factory, module.exports, [module.exports, require, module, filename, path.dirname(filename)]);
    if (typeof module.exports !== 'function') {
      return {
        error: {
          kind: 'load',
          name: 'TypeError',
          message: `${filename} must export a function: module.exports = async function (req) { ... } (it exports ${describeType(module.exports)})`,
        },
      };
    }
    return { loaded: { fn: module.exports as Loaded['fn'], errors, filename } };
  } catch (error) {
    if (String((error as Error)?.message).includes('SES_IMPORT_REJECTED')) {
      const line = /:(\d+)\. \(SES_IMPORT_REJECTED\)/.exec((error as Error).message)?.[1];
      return {
        error: {
          kind: 'load',
          name: 'SyntaxError',
          message: `${filename}${line ? `:${line}` : ''}: import() is not available in the sandbox; require() an allowlisted module instead.`,
        },
      };
    }
    const { name, stack } = (error ?? {}) as Error;
    const message = withPlatformHint(String((error as Error | undefined)?.message));
    const location = typeof stack === 'string' ? locate(stack, filename) : undefined;
    return {
      error: {
        kind: 'load',
        name: typeof name === 'string' ? name : 'Error',
        message: `${location ? `${location}: ` : ''}${typeof name === 'string' ? name : 'Error'}: ${String(message)}`,
        ...(typeof stack === 'string' && { stack }),
        ...(location && { location }),
      },
    };
  }
}

/** `require` as user code (and the npm code it loads) sees it: the allowlist, nothing else. */
function makeRequire(
  compartment: Compartment,
  errors: UserErrors,
  modules: Record<string, unknown>,
  config: InitRequest,
): (name: string) => unknown {
  const cache = new Map<string, { exports: unknown }>();
  const packagesDir = path.join(config.projectDir, 'node_modules');
  const allowedNames = [...BUILTIN_ALLOWLIST, ...config.npmAllowlist, ERRORS_MODULE];
  const refuse = (name: string) =>
    new Error(`Cannot require "${name}": only these modules are available: ${allowedNames.join(', ')}.`);

  const requireFrom = (dir: string, user: boolean) =>
    function require(name: string): unknown {
      if (typeof name !== 'string') throw new TypeError('require() takes a module name (a string)');
      const bare = name.startsWith('node:') ? name.slice(5) : name;
      if (name === ERRORS_MODULE) return errors;
      if (builtinModules.includes(bare)) {
        // User code gets the allowlisted built-ins; the packages' own code, also those only they need (`fs`).
        if (!(bare in modules) || (user && !(BUILTIN_ALLOWLIST as readonly string[]).includes(bare)))
          throw refuse(name);
        return modules[bare];
      }
      const isPath = name.startsWith('.') || name.startsWith('/');
      const packageName = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!;
      if (user && !isPath && (!config.npmAllowlist.includes(packageName) || name.split('/').includes('..')))
        throw refuse(name);
      if (user && isPath)
        throw new Error(`Cannot require "${name}": user code is a single file; require allowlisted packages by name.`);
      let file: string;
      try {
        file = createRequire(path.join(dir, 'noop.js')).resolve(name, { paths: [dir, config.projectDir] });
      } catch {
        throw new Error(`Cannot find module "${name}" in your project: install it (npm install ${packageName}).`);
      }
      // Package code can only ever load files of installed packages, never an arbitrary path.
      if (!file.startsWith(packagesDir + path.sep)) {
        throw new Error(
          `Cannot require "${name}": only files of packages in your project's node_modules can be loaded.`,
        );
      }
      return loadFile(file);
    };

  const loadFile = (file: string): unknown => {
    const cached = cache.get(file);
    if (cached) return cached.exports;
    const module = { exports: {} as unknown };
    cache.set(file, module);
    const source = readFileSync(file, 'utf8');
    if (file.endsWith('.json')) {
      module.exports = JSON.parse(source);
      return module.exports;
    }
    // Stacks name the file as the project does (node_modules/...), not by its place on this machine.
    const sourceName = path.relative(config.projectDir, file).split(path.sep).join('/');
    userSources.add(sourceName);
    const factory = compartment.evaluate(
      `${MODULE_PREFIX}${neutralizeSesTriggers(defineConstructorInExtends(source.replace(/^#!.*/, '')))}\n})\n//# sourceURL=${sourceName}`,
      EVALUATE_OPTIONS,
    ) as (...args: unknown[]) => void;
    Reflect.apply(factory, module.exports, [
      module.exports,
      requireFrom(path.dirname(file), false),
      module,
      sourceName,
      path.posix.dirname(sourceName),
    ]);
    return module.exports;
  };

  return requireFrom(config.projectDir, true);
}

/** A syntax error with the file, line and column, from V8's "file:line" header and caret. */
function syntaxError(error: Error, filename: string): SerializedError {
  const lines = (error.stack ?? '').split('\n');
  const line = /:(\d+)$/.exec(lines[0] ?? '')?.[1];
  const caret = lines[2] ?? '';
  const column = caret.includes('^') ? caret.indexOf('^') + 1 : undefined;
  const location = line ? `${filename}:${line}${column !== undefined ? `:${column}` : ''}` : filename;
  const excerpt = lines[1] !== undefined && caret.includes('^') ? `\n${lines[1]}\n${caret}` : '';
  return {
    kind: 'load',
    name: 'SyntaxError',
    message: `${location}: SyntaxError: ${error.message}${esmHint(error.message)}${excerpt}`,
    location,
  };
}

/** ES module syntax (`export default`, `import x from`) where a CommonJS module is expected: says so, with the form to use. */
function esmHint(message: string): string {
  if (!/Unexpected token 'export'|Cannot use import statement outside a module/.test(message)) return '';
  return ' (reactors and transforms are CommonJS: `module.exports = async function (req) { ... }`, and require() in place of import)';
}
