/**
 * Stacks user code can read name only user code: its own file (the name the user gave it) and the
 * npm files it loaded (relative to the project), never a path of the host, svc's own code or SES.
 */

interface CallSite {
  getFileName(): string | null | undefined;
  getScriptNameOrSourceURL(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getFunctionName(): string | null;
}

/** The parameters of the CommonJS wrapper every module is compiled in. */
export const MODULE_PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname'];

/** The wrapper opens on the code's first line: columns there are shifted by its length. */
export const MODULE_PREFIX = `(function (${MODULE_PARAMETERS.join(', ')}) {`;

/** The source names user code runs under: its file names and `node_modules/...` of the packages it loaded. */
export const userSources = new Set<string>();
/** Code compiled under another URL than its name (a debugger's `file://` URL of the user's file): the name stacks show. */
export const sourceNames = new Map<string, string>();

/**
 * Installed as `Error.prepareStackTrace` of the host's start compartment after lockdown(): SES then
 * calls it for every stack, a compartment's own errors included, and compartments cannot replace it.
 */
export function prepareUserStack(error: unknown, callSites: readonly CallSite[]): string {
  let head: string;
  try {
    head = String(error);
  } catch {
    head = 'Error';
  }
  let frames = '';
  for (const site of callSites) {
    const url = site.getScriptNameOrSourceURL() ?? site.getFileName();
    const file = url ? (sourceNames.get(url) ?? url) : url;
    if (!file || !userSources.has(file)) continue;
    const name = site.getFunctionName();
    const line = site.getLineNumber() ?? 0;
    const column = (site.getColumnNumber() ?? 0) - (line === 1 ? MODULE_PREFIX.length : 0);
    const where = `${file}:${line}:${column}`;
    frames += `\n    at ${name ? `${name} (${where})` : where}`;
  }
  return head + frames;
}

/** `file:line:column` of the first frame of `filename` in a stack. */
export function locate(stack: string, filename: string): string | undefined {
  const escaped = filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
  return match ? `${filename}:${match[1]}:${match[2]}` : undefined;
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object')
    return Object.keys(value as object).length
      ? `an object with ${Object.keys(value as object).join(', ')}`
      : 'an empty object';
  return `a ${typeof value}`;
}

export function describeThrown(value: unknown): string {
  try {
    if (value instanceof Error)
      return typeof value.stack === 'string' ? value.stack : `${value.name}: ${value.message}`;
    return JSON.stringify(value) ?? String(value);
  } catch {
    return 'a value that cannot be shown';
  }
}
