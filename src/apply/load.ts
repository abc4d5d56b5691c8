import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { AccessRule } from '../api/types.js';
import { checkConfig } from './check.js';
import { ApplyError } from './errors.js';
import { interpolate, type InterpolationIssue } from './interpolate.js';
import { formatPath, Locator, type YamlPath } from './locate.js';
import type { RawConfig, RawRule } from './raw.js';
import { schemaIssues, schemaValidator } from './schema.js';
import { OutsideFolderError, readCodeFile, readEnvFile, UnreadableFileError } from '../resources/index.js';
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
  const allowOutside = options.allowOutsideProject ?? false;
  const read = await readSource(absolute, allowOutside);
  if ('error' in read) {
    const missing = read.error === 'no such file';
    const hint = missing
      ? ' (-f names another file; `svc import` writes one from what the target holds)'
      : read.outside
        ? `; ${OUTSIDE_HINT}`
        : '';
    throw new ApplyError(`Cannot read ${shown}: ${read.error}${hint}.`);
  }

  const lines = new LineCounter();
  const doc = parseDocument(read.text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lines.linePos(syntax.pos[0]);
    throw new ApplyError(`${shown}:${line}:${col} ${syntax.message}`, { files: [absolute] });
  }
  const locator = new Locator(doc, lines);
  const issues: { line: number; text: string }[] = [];
  const report = (at: YamlPath, message: string, atKey = false) => {
    const line = locator.line(at, atKey);
    issues.push({ line, text: `${shown}:${line} ${at.length > 0 ? `${formatPath(at)}: ` : ''}${message}` });
  };
  const named = new Set<string>([absolute]);
  const fail = () =>
    ApplyError.of(
      issues.sort((a, b) => a.line - b.line).map((issue) => issue.text),
      { files: [...named] },
    );

  const found = plainValue(doc, shown, absolute);
  const interpolationIssues: InterpolationIssue[] = [];
  const config = interpolate(found, options.env, interpolationIssues);
  for (const issue of interpolationIssues) report(issue.path, issue.message);
  const validate = schemaValidator();
  if (!validate(config)) {
    for (const issue of schemaIssues(validate.errors)) report(issue.path, issue.message, issue.atKey);
  }
  if (issues.length > 0) throw fail();
  const raw = config as RawConfig;
  for (const issue of checkConfig(raw)) report(issue.path, issue.message, issue.atKey);
  if (issues.length > 0) throw fail();

  const dir = path.dirname(absolute);
  const files = new Map<string, SourceFile>();
  files.set(absolute, { path: path.basename(absolute), absolute, digest: sha256(read.text) });
  const unreadable = (at: YamlPath, error: unknown) => {
    if (!(error instanceof UnreadableFileError)) throw error;
    const hint = error instanceof OutsideFolderError ? `; ${OUTSIDE_HINT}` : '';
    report(at, `cannot read ${displayPath(error.file, options.cwd)}: ${error.reason}${hint}`);
    return undefined;
  };
  const limits = allowOutside ? {} : { within: dir };
  const readCode = async (at: YamlPath, relative: string): Promise<CodeRef | undefined> => {
    named.add(path.resolve(dir, relative));
    const code = await readCodeFile(relative, dir, limits).catch((error: unknown) => unreadable(at, error));
    if (code === undefined) return undefined;
    const absolute = path.resolve(dir, relative);
    files.set(absolute, { path: relative, absolute, digest: sha256(code) });
    if (code.trim() === '') {
      report(at, `${displayPath(absolute, options.cwd)} is empty`);
      return undefined;
    }
    const problem = syntaxError(code);
    if (problem) {
      const where = displayPath(absolute, options.cwd);
      const text = `${where}:${problem.line}:${problem.column} ${problem.message} (${formatPath(at)})`;
      issues.push({ line: locator.line(at), text });
      return undefined;
    }
    return { path: relative, code };
  };
  const readConfiguration = async (at: YamlPath, value: Record<string, string> | string | undefined) => {
    if (typeof value !== 'string') return value;
    named.add(path.resolve(dir, value));
    const configuration = await readEnvFile(value, dir, limits).catch((error: unknown) => unreadable(at, error));
    if (configuration === undefined) return undefined;
    // What svc takes from a .env file is its pairs: a comment edited there changes nothing.
    const absolute = path.resolve(dir, value);
    const pairs = Object.entries(configuration).sort(([a], [b]) => (a < b ? -1 : 1));
    files.set(absolute, { path: value, absolute, digest: sha256(JSON.stringify(pairs)) });
    return configuration;
  };

  const applications: DesiredApplication[] = Object.entries(raw.applications ?? {}).map(([name, app]) => ({
    name,
    type: app.type,
    permissions: app.permissions ?? [],
    rules: (app.rules ?? []).map(toRule),
    ...(app.renamed_from !== undefined && { renamedFrom: app.renamed_from }),
    line: locator.line(['applications', name], true),
  }));

  // Files are read one after another: a config names a handful, and the order keeps `files` stable.
  const reactors: DesiredReactor[] = [];
  for (const [name, reactor] of Object.entries(raw.reactors ?? {})) {
    const at = ['reactors', name];
    const code = await readCode([...at, 'code'], reactor.code);
    const configuration = await readConfiguration([...at, 'configuration'], reactor.configuration);
    if (code === undefined) continue;
    reactors.push({
      name,
      code,
      configuration: configuration ?? {},
      application: reactor.application ?? null,
      ...(reactor.renamed_from !== undefined && { renamedFrom: reactor.renamed_from }),
      line: locator.line(at, true),
    });
  }

  const proxies: DesiredProxy[] = [];
  for (const [name, proxy] of Object.entries(raw.proxies ?? {})) {
    const at = ['proxies', name];
    const transform = (field: 'request_transform' | 'response_transform') => {
      const file = proxy[field];
      return file === undefined ? null : readCode([...at, field], file);
    };
    const request = await transform('request_transform');
    const response = await transform('response_transform');
    const configuration = await readConfiguration([...at, 'configuration'], proxy.configuration);
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
      line: locator.line(at, true),
    });
  }
  if (issues.length > 0) throw fail();
  return { file: shown, dir, applications, reactors, proxies, files: [...files.values()] };
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
