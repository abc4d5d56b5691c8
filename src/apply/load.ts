import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { AccessRule } from '../api/types.js';
import { checkablePart, checkConfig } from './check.js';
import { ApplyError } from './errors.js';
import { interpolate, type InterpolationIssue } from './interpolate.js';
import { formatPath, Locator, type YamlPath } from './locate.js';
import type { RawConfig, RawRule } from './raw.js';
import { schemaIssues, schemaValidator } from './schema.js';
import { OutsideFolderError, readCodeFile, readEnvFile, UnreadableFileError } from '../requests/index.js';
import { displayPath, readSource, sha256, syntaxError } from './sources.js';
import {
  addressOf,
  type Address,
  type CodeRef,
  type Desired,
  type DesiredApplication,
  type DesiredProxy,
  type DesiredReactor,
  type HeldResource,
  type Kind,
  type SourceFile,
} from './types.js';

export interface LoadOptions {
  /** Relative paths (the file itself) are resolved from here, and messages name files from here. */
  cwd: string;
  /** For `${env:NAME}`. */
  env: Record<string, string | undefined>;
  /**
   * Read files outside svc.yaml's folder (symlinks resolved) too (`--allow-outside-project`). Off, a
   * svc.yaml cloned from elsewhere cannot upload `../../.aws/credentials` or `/etc/passwd` as code.
   */
  allowOutsideProject?: boolean;
  /**
   * A reactor or proxy whose file does not load (a syntax error, an empty or missing file) is held back
   * (Desired.held) instead of failing the load: the rest is applied, and it keeps what the target has.
   * Watching does this; a one-off `svc apply` refuses the whole file.
   */
  holdBroken?: boolean;
}

/** How a message says to allow a file outside the project. */
export const OUTSIDE_HINT = 'svc reads only files in the folder of svc.yaml (--allow-outside-project reads others)';

/**
 * Loads svc.yaml (or JSON, which is YAML too): parsed with its line numbers kept, `${env:}`
 * resolved, checked against the shipped JSON Schema and the rules that span fields, and every
 * file it names read (code checked to parse). Throws an ApplyError with every problem found (the
 * schema's, the references', the files'), each naming `file:line:column` and the path
 * (`svc.yaml:12:18 reactors.charge.application: no Application "backnd" (did you mean backend?)`),
 * or a code file's own `file:line:column` where it does not parse.
 */
export async function loadConfig(file: string, options: LoadOptions): Promise<Desired> {
  const absolute = path.resolve(options.cwd, file);
  const shown = displayPath(absolute, options.cwd);
  const text = await readConfigText(absolute, shown, options.allowOutsideProject ?? false);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lines.linePos(syntax.pos[0]);
    throw new ApplyError(`${shown}:${line}:${col} ${syntax.message}`, { files: [absolute] });
  }
  const load = new ConfigLoad(absolute, shown, new Locator(doc, lines), options);
  const raw = checkedConfig(load, plainValue(doc, shown, absolute), options.env);
  load.files.set(absolute, { path: path.basename(absolute), absolute, digest: sha256(text) });
  const applications = desiredApplications(raw, load.locator);
  // Files are read one after another: a config names a handful, and the order keeps `files` stable.
  const reactors = await desiredReactors(raw, load);
  const proxies = await desiredProxies(raw, load);
  const held = load.finish();
  const files = [...load.files.values()];
  const desired: Desired = { file: shown, dir: load.dir, applications, reactors, proxies, files };
  return held.length > 0 ? { ...desired, held, unread: load.unread() } : desired;
}

/** svc.yaml's text, or an ApplyError saying why it cannot be read. */
async function readConfigText(absolute: string, shown: string, allowOutside: boolean): Promise<string> {
  const read = await readSource(absolute, allowOutside);
  if (!('error' in read)) return read.text;
  const missing = read.error === 'no such file';
  const hint = missing
    ? ' (-f names another file; `svc import` writes one from what the target holds)'
    : read.outside
      ? `; ${OUTSIDE_HINT}`
      : '';
  throw new ApplyError(`Cannot read ${shown}: ${read.error}${hint}.`);
}

/**
 * The document with `${env:}` resolved, checked against the schema, then by the rules that span
 * fields. A document the schema refuses is checked further where its shape allows (checkablePart),
 * and what it returns is that part, so that its files are read too: every problem is said at once.
 */
function checkedConfig(load: ConfigLoad, found: unknown, env: LoadOptions['env']): RawConfig {
  const interpolationIssues: InterpolationIssue[] = [];
  const config = interpolate(found, env, interpolationIssues);
  const refused: YamlPath[] = [];
  for (const issue of interpolationIssues) {
    load.report(issue.path, issue.message);
    refused.push(issue.path);
  }
  const validate = schemaValidator();
  if (!validate(config)) {
    for (const issue of schemaIssues(validate.errors)) {
      load.report(issue.path, issue.message, issue.atKey);
      refused.push(issue.path);
    }
  }
  const part =
    refused.length === 0
      ? { config: config as RawConfig, unchecked: new Set<string>() }
      : checkablePart(config, refused);
  if (!part) load.throwIfIssues();
  const raw = part?.config ?? {};
  for (const issue of checkConfig(raw, part?.unchecked)) load.report(issue.path, issue.message, issue.atKey);
  return raw;
}

interface Issue {
  /** Where in svc.yaml, for the order problems are said in. */
  line: number;
  col: number;
  text: string;
}

/**
 * One load of svc.yaml: the issues found (each at its line), the files it names (watched even when
 * they do not load) and the files read, with their digests.
 */
class ConfigLoad {
  readonly dir: string;
  readonly files = new Map<string, SourceFile>();
  private readonly issues: Issue[] = [];
  /** The problems of the files a resource names, by its address: held back, or thrown with the rest. */
  private readonly fileIssues = new Map<Address, Issue[]>();
  private readonly named: Set<string>;
  private readonly limits: { within?: string };

  constructor(
    absolute: string,
    private readonly shown: string,
    readonly locator: Locator,
    private readonly options: LoadOptions,
  ) {
    this.dir = path.dirname(absolute);
    this.named = new Set([absolute]);
    this.limits = options.allowOutsideProject ? {} : { within: this.dir };
  }

  report(at: YamlPath, message: string, atKey = false): void {
    this.issues.push(this.issue(at, message, atKey));
  }

  private issue(at: YamlPath, message: string, atKey = false): Issue {
    const { line, col } = this.locator.position(at, atKey);
    const text = `${this.shown}:${line}:${col} ${at.length > 0 ? `${formatPath(at)}: ` : ''}${message}`;
    return { line, col, text };
  }

  /** A problem of a file the resource at `at` names (a path of at least kind and name). */
  private reportFile(at: YamlPath, issue: Issue): void {
    const address = addressOf(at[0] as Kind, String(at[1]));
    this.fileIssues.set(address, [...(this.fileIssues.get(address) ?? []), issue]);
  }

  /** The resource at `kind.name` named a file that does not load. */
  broken(kind: Kind, name: string): boolean {
    return this.fileIssues.has(addressOf(kind, name));
  }

  /** Throws the issues found so far, in svc.yaml's order, as one ApplyError naming every file named. */
  throwIfIssues(): void {
    const issues = [...this.issues, ...[...this.fileIssues.values()].flat()];
    if (issues.length === 0) return;
    const sorted = issues.sort((a, b) => a.line - b.line || a.col - b.col).map((issue) => issue.text);
    throw ApplyError.of(sorted, { files: [...this.named], of: this.shown });
  }

  /** The files named that were not read (a missing code file held back): watched all the same. */
  unread(): string[] {
    return [...this.named].filter((file) => !this.files.has(file));
  }

  /** The end of the load: throws what was found, but for the broken files held back (holdBroken). */
  finish(): HeldResource[] {
    if (this.issues.length > 0 || !this.options.holdBroken) this.throwIfIssues();
    return [...this.fileIssues].map(([address, issues]) => ({
      address,
      message: issues.map((issue) => issue.text).join('; '),
    }));
  }

  /** A code file: read, not empty, and parsing; undefined (with an issue) when not. */
  async readCode(at: YamlPath, relative: string): Promise<CodeRef | undefined> {
    const absolute = path.resolve(this.dir, relative);
    this.named.add(absolute);
    const code = await readCodeFile(relative, this.dir, this.limits).catch((error: unknown) =>
      this.unreadable(at, error),
    );
    if (code === undefined) return undefined;
    this.files.set(absolute, { path: relative, absolute, digest: sha256(code) });
    if (code.trim() === '') {
      this.reportFile(at, this.issue(at, `${displayPath(absolute, this.options.cwd)} is empty`));
      return undefined;
    }
    const problem = syntaxError(code);
    if (problem) {
      const where = displayPath(absolute, this.options.cwd);
      const text = `${where}:${problem.line}:${problem.column} ${problem.message} (${formatPath(at)})`;
      this.reportFile(at, { ...this.locator.position(at), text });
      return undefined;
    }
    return { path: relative, code };
  }

  /** A configuration as written inline, or read from the .env file named. */
  async readConfiguration(
    at: YamlPath,
    value: Record<string, string> | string | undefined,
  ): Promise<Record<string, string> | undefined> {
    if (typeof value !== 'string') return value;
    const absolute = path.resolve(this.dir, value);
    this.named.add(absolute);
    const configuration = await readEnvFile(value, this.dir, this.limits).catch((error: unknown) =>
      this.unreadable(at, error),
    );
    if (configuration === undefined) return undefined;
    // What svc takes from a .env file is its pairs: a comment edited there changes nothing.
    const pairs = Object.entries(configuration).sort(([a], [b]) => (a < b ? -1 : 1));
    this.files.set(absolute, { path: value, absolute, digest: sha256(JSON.stringify(pairs)) });
    return configuration;
  }

  private unreadable(at: YamlPath, error: unknown): undefined {
    if (!(error instanceof UnreadableFileError)) throw error;
    const hint = error instanceof OutsideFolderError ? `; ${OUTSIDE_HINT}` : '';
    const message = `cannot read ${displayPath(error.file, this.options.cwd)}: ${error.reason}${hint}`;
    this.reportFile(at, this.issue(at, message));
    return undefined;
  }
}

function desiredApplications(raw: RawConfig, locator: Locator): DesiredApplication[] {
  return Object.entries(raw.applications ?? {}).map(([name, app]) => ({
    name,
    type: app.type,
    permissions: app.permissions ?? [],
    rules: (app.rules ?? []).map(toRule),
    ...(app.renamed_from !== undefined && { renamedFrom: app.renamed_from }),
    line: locator.line(['applications', name], true),
  }));
}

async function desiredReactors(raw: RawConfig, load: ConfigLoad): Promise<DesiredReactor[]> {
  const reactors: DesiredReactor[] = [];
  for (const [name, reactor] of Object.entries(raw.reactors ?? {})) {
    const at = ['reactors', name];
    const code = await load.readCode([...at, 'code'], reactor.code);
    const configuration = await load.readConfiguration([...at, 'configuration'], reactor.configuration);
    if (code === undefined || load.broken('reactors', name)) continue;
    reactors.push({
      name,
      code,
      configuration: configuration ?? {},
      application: reactor.application ?? null,
      ...(reactor.renamed_from !== undefined && { renamedFrom: reactor.renamed_from }),
      line: load.locator.line(at, true),
    });
  }
  return reactors;
}

async function desiredProxies(raw: RawConfig, load: ConfigLoad): Promise<DesiredProxy[]> {
  const proxies: DesiredProxy[] = [];
  for (const [name, proxy] of Object.entries(raw.proxies ?? {})) {
    const at = ['proxies', name];
    const transform = (field: 'request_transform' | 'response_transform') => {
      const file = proxy[field];
      return file === undefined ? null : load.readCode([...at, field], file);
    };
    const request = await transform('request_transform');
    const response = await transform('response_transform');
    const configuration = await load.readConfiguration([...at, 'configuration'], proxy.configuration);
    if (request === undefined || response === undefined || load.broken('proxies', name)) continue;
    proxies.push({
      name,
      destination_url: proxy.destination_url,
      request_transform: request,
      response_transform: response,
      configuration: configuration ?? null,
      application: proxy.application ?? null,
      require_auth: proxy.require_auth ?? true,
      ...(proxy.renamed_from !== undefined && { renamedFrom: proxy.renamed_from }),
      line: load.locator.line(at, true),
    });
  }
  return proxies;
}

/** How many nodes aliases may copy in all, weighted as yaml counts them (its own default, said here). */
const MAX_ALIAS_COUNT = 100;

/**
 * The document as plain values. Aliases are expanded with a bound: a few lines of `&a [*b, *b, ...]`
 * ("billion laughs") would otherwise grow to gigabytes; yaml refuses past the bound, said here in words.
 */
function plainValue(doc: ReturnType<typeof parseDocument>, shown: string, absolute: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
  } catch (error) {
    if (!(error instanceof ReferenceError) || !/alias/i.test(error.message)) throw error;
    const message = /excessive/i.test(error.message)
      ? 'its aliases (*name) expand to too many copies (a "billion laughs"); write the values out, or refer to each anchor fewer times'
      : error.message;
    throw new ApplyError(`${shown}: ${message}.`, { files: [absolute] });
  }
}

function toRule(rule: RawRule): AccessRule {
  return {
    ...(rule.description !== undefined && { description: rule.description }),
    priority: rule.priority,
    container: rule.container,
    transform: rule.transform,
    permissions: rule.permissions,
  };
}
