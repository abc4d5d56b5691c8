/**
 * What a handler gets, read off its command's definition at compile time, so option and argument types
 * are written once: in the specs. The registry builds the runtime values from the same specs
 * (commander's camelCase keys, `--no-x` as `x: false`), and these types say what it builds.
 */

/** One option, as commander takes it. Declare lists of them `as const` (or inline in defineCommand). */
export interface OptionSpec {
  /** Commander flags, e.g. `--name <name>`, `-X, --method <method>`, `--show-code` or `--no-auth`. */
  readonly flags: string;
  readonly description: string;
  readonly choices?: readonly string[];
  /** Collect every occurrence into an array. */
  readonly repeatable?: boolean;
  readonly required?: boolean;
  readonly default?: string | boolean;
}

export interface ArgSpec {
  readonly name: string;
  readonly description: string;
  readonly optional?: boolean;
  /**
   * The words after `--`, as typed (a command line of its own, `svc exec -- CMD ARGS...`); undefined
   * when there is no `--` or a word before it that no option took.
   */
  readonly rest?: boolean;
}

/** `-X, --request <method>` -> `--request <method>`: the long form names the option. */
type LongForm<F extends string> = F extends `${string}, ${infer Rest}` ? LongForm<Rest> : F;

/** `--request <method>` -> `request`; `--no-auth` -> `no-auth`. */
type FlagName<F extends string> =
  LongForm<F> extends `--${infer Name} ${string}` ? Name : LongForm<F> extends `--${infer Name}` ? Name : never;

type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

type IsNegation<S extends OptionSpec> = FlagName<S['flags']> extends `no-${string}` ? true : false;

/**
 * The key of `options` that a spec sets: commander's camelCase, without the `no-` of a negation. Given
 * a union of specs, the union of their keys (hence `S extends OptionSpec`, which distributes).
 */
type KeyOf<S extends OptionSpec> = S extends OptionSpec
  ? FlagName<S['flags']> extends `no-${infer Rest}`
    ? CamelCase<Rest>
    : CamelCase<FlagName<S['flags']>>
  : never;

type TakesValue<F extends string> =
  LongForm<F> extends `${string} <${string}>` | `${string} [${string}]` ? true : false;

/** What one spec can put under its key: `--no-x` false, a switch boolean, a value string (or a choice), a list. */
type ValueOf<S extends OptionSpec> = S extends OptionSpec
  ? IsNegation<S> extends true
    ? false
    : TakesValue<S['flags']> extends false
      ? boolean
      : S extends { readonly repeatable: true }
        ? string[]
        : S extends { readonly choices: readonly (infer Choice)[] }
          ? Choice
          : LongForm<S['flags']> extends `${string} [${string}]`
            ? string | true
            : string
  : never;

/** The specs of `Specs` that set `Key` (an option and its `--no-` form share one). */
type SpecsOf<Specs extends readonly OptionSpec[], Key> = Specs[number] extends infer S
  ? S extends OptionSpec
    ? KeyOf<S> extends Key
      ? S
      : never
    : never
  : never;

/**
 * A key always has a value when commander gives it one without the flag: a required option, one with a
 * default, or a lone `--no-x` (whose default is true; with `--x` beside it there is none).
 */
type AlwaysSet<S extends OptionSpec> = [S] extends [never]
  ? false
  : true extends (S extends { readonly required: true } | { readonly default: string | boolean } ? true : never)
    ? true
    : [S] extends [{ readonly flags: `${string}--no-${string}` }]
      ? true
      : false;

/** A lone `--no-x` gives `x: boolean` (true unless the flag is passed). */
type Value<S extends OptionSpec> = [S] extends [{ readonly flags: `${string}--no-${string}` }] ? boolean : ValueOf<S>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The `options` a handler gets from its specs: `--name <pattern>` -> `name?: string`, and so on. */
export type OptionsOf<Specs extends readonly OptionSpec[]> = Simplify<
  {
    [K in KeyOf<Specs[number]> as AlwaysSet<SpecsOf<Specs, K>> extends true ? K : never]: Value<SpecsOf<Specs, K>>;
  } & {
    [K in KeyOf<Specs[number]> as AlwaysSet<SpecsOf<Specs, K>> extends true ? never : K]?: Value<SpecsOf<Specs, K>>;
  }
>;

/** The `args` a handler gets: a string per argument, possibly undefined when the argument is optional. */
export type ArgsOf<Specs extends readonly ArgSpec[]> = Simplify<{
  [S in Specs[number] as S['name']]: S extends { readonly rest: true }
    ? string[] | undefined
    : S extends { readonly optional: true }
      ? string | undefined
      : string;
}>;
