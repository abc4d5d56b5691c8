import type { CommandGroup, RegisteredCommand } from '../registry.js';

export type Entry = RegisteredCommand | CommandGroup;

/**
 * Every command of svc, in the order --help lists them, each with the names a command line may call
 * it by (a group's aliases too) and the module that holds it. A command line that names one loads
 * that one only: loading all of them (about a hundred modules) would cost every command ~50 ms.
 */
const TABLE: readonly (readonly [names: readonly string[], load: () => Promise<Entry>])[] = [
  [['serve'], async () => (await import('./serve.js')).serve],
  [['exec'], async () => (await import('./exec.js')).exec],
  [['init'], async () => (await import('./init.js')).init],
  [['apply'], async () => (await import('./apply.js')).apply],
  [['import'], async () => (await import('./import.js')).importCommand],
  [['applications', 'apps'], async () => (await import('./applications/index.js')).applications],
  [['reactors'], async () => (await import('./reactors/index.js')).reactors],
  [['proxies'], async () => (await import('./proxies/index.js')).proxies],
  [['invoke'], async () => (await import('./invoke/index.js')).invoke],
  [['logs'], async () => (await import('./logs.js')).logs],
  [['explain'], async () => (await import('./explain.js')).explain],
  [['replay'], async () => (await import('./replay.js')).replay],
  [['access'], async () => (await import('./access/index.js')).access],
  [['tokens'], async () => (await import('./tokens/index.js')).tokens],
  [['tokenize'], async () => (await import('./tokenize.js')).tokenize],
  [['detokenize'], async () => (await import('./detokenize.js')).detokenize],
  [['transactions'], async () => (await import('./transactions/index.js')).transactions],
  [['tenants'], async () => (await import('./tenants/index.js')).tenants],
  [['webhooks'], async () => (await import('./webhooks/index.js')).webhooks],
  [['state'], async () => (await import('./state/index.js')).state],
  [['profiles'], async () => (await import('./profiles/index.js')).profiles],
  [['version'], async () => (await import('./version.js')).version],
  [['completion'], async () => (await import('./completion.js')).completion],
];

/** The global options that take a value: the word after one is that value, not a command. */
const VALUED_GLOBALS = new Set(['--base-url', '--management-key', '--api-key', '--profile']);

/** Every command, in help order (the root help, completion, and a command line that names none known). */
export async function allCommands(): Promise<Entry[]> {
  return Promise.all(TABLE.map(([, load]) => load()));
}

/**
 * The commands a command line needs: the one its first word names, or all of them when it names
 * none known (`svc`, `svc --help`, `svc help X`, a typo that commander answers with a suggestion).
 */
export async function commandsFor(argv: readonly string[]): Promise<Entry[]> {
  const word = firstWord(argv);
  const named = TABLE.find(([names]) => word !== undefined && names.includes(word));
  return named ? [await named[1]()] : allCommands();
}

function firstWord(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return argv[i + 1];
    if (!arg.startsWith('-')) return arg;
    if (VALUED_GLOBALS.has(arg)) i++;
  }
  return undefined;
}
