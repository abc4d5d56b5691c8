import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { AccessRule } from '../api/types.js';
import { checkConfig } from './check.js';
import { ApplyError } from './errors.js';
import { interpolate, type InterpolationIssue } from './interpolate.js';
import { formatPath, Locator, type YamlPath } from './locate.js';
import type { RawConfig, RawRule } from './raw.js';
import { schemaIssues, schemaValidator } from './schema.js';
import { OutsideFolderError, readCodeFile, readEnvFile, UnreadableFileError } from '../requests/index.js';
import { displayPath, readSource, sha256, syntaxError } from './sources.js';
import type { CodeRef, Desired, DesiredApplication, DesiredProxy, DesiredReactor, SourceFile } from './types.js';

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
}

/** How a message says to allow a file outside the project. */
export const OUTSIDE_HINT = 'svc reads only files in the folder of svc.yaml (--allow-outside-project reads others)';

/**
 * Loads svc.yaml (or JSON, which is YAML too): parsed with its line numbers kept, `${env:}`
 * resolved, checked against the shipped JSON Schema and the rules that span fields, and every
 * file it names read (code checked to parse). Throws an ApplyError whose every issue names
 * `file:line` and the path (`svc.yaml:12 reactors.charge.application: no Application "backnd"
 * (did you mean backend?)`), or `file:line:column` for a file that does not parse.
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
  load.throwIfIssues();
  return { file: shown, dir: load.dir, applications, reactors, proxies, files: [...load.files.values()] };
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

/** The document with `${env:}` resolved, checked against the schema, then by the rules that span fields. */
function checkedConfig(load: ConfigLoad, found: unknown, env: LoadOptions['env']): RawConfig {
  const interpolationIssues: InterpolationIssue[] = [];
  const config = interpolate(found, env, interpolationIssues);
  for (const issue of interpolationIssues) load.report(issue.path, issue.message);
  const validate = schemaValidator();
  if (!validate(config)) {
    for (const issue of schemaIssues(validate.errors)) load.report(issue.path, issue.message, issue.atKey);
  }
  load.throwIfIssues();
  const raw = config as RawConfig;
  for (const issue of checkConfig(raw)) load.report(issue.path, issue.message, issue.atKey);
  load.throwIfIssues();
  return raw;
}

/**
 * One load of svc.yaml: the issues found (each at its line), the files it names (watched even when
 * they do not load) and the files read, with their digests.
 */
class ConfigLoad {
  readonly dir: string;
  readonly files = new Map<string, SourceFile>();
  private readonly issues: { line: number; text: string }[] = [];
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
    const line = this.locator.line(at, atKey);
    this.issues.push({ line, text: `${this.shown}:${line} ${at.length > 0 ? `${formatPath(at)}: ` : ''}${message}` });
  }

  /** Throws the issues found so far, in line order, as one ApplyError naming every file named. */
  throwIfIssues(): void {
    if (this.issues.length === 0) return;
    throw ApplyError.of(
      this.issues.sort((a, b) => a.line - b.line).map((issue) => issue.text),
      { files: [...this.named] },
    );
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
      this.report(at, `${displayPath(absolute, this.options.cwd)} is empty`);
      return undefined;
    }
    const problem = syntaxError(code);
    if (problem) {
      const where = displayPath(absolute, this.options.cwd);
      const text = `${where}:${problem.line}:${problem.column} ${problem.message} (${formatPath(at)})`;
      this.issues.push({ line: this.locator.line(at), text });
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
    this.report(at, `cannot read ${displayPath(error.file, this.options.cwd)}: ${error.reason}${hint}`);
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
    if (code === undefined) continue;
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
    if (request === undefined || response === undefined) continue;
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
