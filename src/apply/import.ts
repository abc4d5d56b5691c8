/**
 * `svc import`: writes svc.yaml and the code files from what a target holds, and records the
 * resources in `.svc/state.json`, so that the next `svc apply` plans no change (adopting a tenant).
 * Configuration values go to `.env` files beside the code (0600), never into svc.yaml.
 */
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Document } from 'yaml';
import type { Application, Proxy, Reactor } from '../api/types.js';
import type { ApiClient } from '../client/index.js';
import { parseEnvText } from '../requests/index.js';
import { contentHash, sameValue } from './compare.js';
import { ApplyError } from './errors.js';
import { writeFileDurably } from '../lib/durable-file.js';
import { SCHEMA_FILE } from './schema.js';
import { identifyTarget, observe } from './session.js';
import { displayPath } from './sources.js';
import { applicationSpec, proxySpec, reactorSpec } from './specs.js';
import { StateFile } from './state.js';
import { KINDS, setEntry, type Kind, type StateEntry } from './types.js';

export interface ImportOptions {
  client: ApiClient;
  /** The svc.yaml to write, relative to `cwd`. */
  out: string;
  cwd: string;
  /** Overwrite files that exist. */
  force?: boolean;
}

export interface ImportResult {
  file: string;
  /** Every file written, as shown from `cwd`. */
  written: string[];
  counts: Record<Kind, number>;
  /** What could not be imported as it is, and why. */
  warnings: string[];
}

interface PendingFile {
  absolute: string;
  text: string;
  mode: number;
}

export async function importTarget(options: ImportOptions): Promise<ImportResult> {
  const out = path.resolve(options.cwd, options.out);
  const dir = path.dirname(out);
  const [target, actual] = await Promise.all([identifyTarget(options.client), observe(options.client)]);
  const draft = new ImportDraft(dir);
  const leftOut = (app: Application): string | undefined => {
    if (app.id === target.selfApplicationId) return 'it is the Application whose key svc is using';
    if (isBootstrap(app))
      return 'svc serve made it (its key is in .svc/credentials.json), and svc apply leaves it alone';
    return undefined;
  };
  for (const app of actual.applications) {
    const why = leftOut(app);
    if (why !== undefined) draft.warnings.push(`applications.${app.name} is not imported: ${why}.`);
  }
  const applications = draft.addApplications(actual.applications.filter((app) => leftOut(app) === undefined));
  const reactors = draft.addReactors(actual.reactors);
  const proxies = draft.addProxies(actual.proxies);

  const doc = new Document(draft.config);
  doc.commentBefore = [
    ` yaml-language-server: $schema=./${SCHEMA_COPY}`,
    ` Imported by \`svc import\` from ${target.url}; \`svc apply\` keeps the target in step with it.`,
  ].join('\n');
  draft.files.push({ absolute: out, text: doc.toString({ lineWidth: 0 }), mode: 0o644 });

  if (!options.force) await refuseExisting(draft.files, options.cwd);
  // svc's own files, as svc init writes them: the schema copy (always the current one) and the
  // .gitignore lines for what must stay out of version control (added to one that exists).
  draft.files.push({ absolute: path.join(dir, SCHEMA_COPY), text: await readFile(SCHEMA_FILE, 'utf8'), mode: 0o644 });
  const ignore = await gitignoreText(path.join(dir, '.gitignore'));
  if (ignore !== undefined) draft.files.push({ absolute: path.join(dir, '.gitignore'), text: ignore, mode: 0o644 });
  for (const file of draft.files) await writeFileDurably(file.absolute, file.text, file.mode);
  await StateFile.beside(dir).update(target, (state) => {
    for (const kind of KINDS) {
      for (const [name, entry] of Object.entries(draft.entries[kind])) setEntry(state[kind], name, entry);
    }
  });
  return {
    file: displayPath(out, options.cwd),
    written: draft.files.map((file) => displayPath(file.absolute, options.cwd)),
    counts: { applications: applications.length, reactors: reactors.length, proxies: proxies.length },
    warnings: draft.warnings,
  };
}

/** The copy of svc's schema beside svc.yaml that its `$schema` line names (as `svc init` writes it). */
const SCHEMA_COPY = 'svc.schema.json';

/**
 * The Applications `svc serve` makes in each tenant, by the names and types it gives them: the API does
 * not mark them, and importing them as managed would let a later `svc apply --prune` delete them (and
 * with them the keys in .svc/credentials.json).
 */
const BOOTSTRAP: readonly { name: string; type: Application['type'] }[] = [
  { name: 'svc management', type: 'management' },
  { name: 'svc private', type: 'private' },
];

function isBootstrap(app: Application): boolean {
  return BOOTSTRAP.some((bootstrap) => bootstrap.name === app.name && bootstrap.type === app.type);
}

/** What .gitignore must hold after an import: the state folder and the .env files of configuration. */
const IGNORED = ['.svc/', '*.env'];

/** The .gitignore with the lines it lacks added at its end; undefined when it has them all. */
async function gitignoreText(file: string): Promise<string | undefined> {
  const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw new ApplyError(`Cannot read ${file}: ${error.message}`);
  });
  const present = new Set(current.split(/\r?\n/).map((line) => line.trim()));
  const missing = IGNORED.filter((line) => !present.has(line));
  if (missing.length === 0) return undefined;
  const lead = current === '' || current.endsWith('\n') ? current : `${current}\n`;
  const comment = '# svc: its state and keys (.svc/) and the configuration values (.env files) svc import wrote';
  return `${lead}${comment}\n${missing.join('\n')}\n`;
}

/**
 * What an import will write, built up one kind at a time: svc.yaml's entries, the files beside it
 * (each name taken once), the state entries, and what could not be imported as it is.
 */
class ImportDraft {
  readonly config: Record<string, Record<string, unknown>> = {};
  readonly files: PendingFile[] = [];
  readonly entries: Record<Kind, Record<string, StateEntry>> = { applications: {}, reactors: {}, proxies: {} };
  readonly warnings: string[] = [];
  private readonly taken = new Set<string>();
  private readonly appNames = new Map<string, string>();

  constructor(private readonly dir: string) {}

  /** Adds the Applications (before what refers to them); returns those imported. */
  addApplications(all: Application[]): Application[] {
    const applications = this.unique('applications', all);
    for (const app of applications) this.appNames.set(app.id, app.name);
    if (applications.length > 0) {
      this.config.applications = Object.fromEntries(applications.map((app) => [app.name, applicationEntry(app)]));
    }
    for (const app of applications) {
      const hash = contentHash('applications', applicationSpec(app));
      setEntry(this.entries.applications, app.name, { id: app.id, hash });
    }
    return applications;
  }

  addReactors(all: Reactor[]): Reactor[] {
    const reactors = this.unique('reactors', all);
    if (reactors.length > 0) {
      this.config.reactors = Object.fromEntries(
        reactors.map((reactor) => {
          const address = `reactors.${reactor.name}`;
          const code = this.fileFor('reactors', reactor.name, '.js');
          this.addFile(code, reactor.code);
          const configuration = this.configurationOf(address, 'reactors', reactor.name, reactor.configuration);
          const application = this.appRef(address, reactor.application?.id ?? null);
          return [reactor.name, { code, ...(configuration !== undefined && { configuration }), ...application }];
        }),
      );
    }
    for (const reactor of reactors) {
      const hash = contentHash('reactors', reactorSpec(reactor));
      setEntry(this.entries.reactors, reactor.name, { id: reactor.id, hash });
    }
    return reactors;
  }

  addProxies(all: Proxy[]): Proxy[] {
    const proxies = this.unique('proxies', all);
    if (proxies.length > 0) {
      this.config.proxies = Object.fromEntries(
        proxies.map((proxy) => {
          const address = `proxies.${proxy.name}`;
          const transform = (which: 'request' | 'response', code: string | undefined) => {
            if (code === undefined) return {};
            const relative = this.fileFor('proxies', proxy.name, `.${which}.js`);
            this.addFile(relative, code);
            return { [`${which}_transform`]: relative };
          };
          const configuration = this.configurationOf(address, 'proxies', proxy.name, proxy.configuration ?? {});
          return [
            proxy.name,
            proxyEntry(proxy, {
              ...transform('request', proxy.request_transform?.code),
              ...transform('response', proxy.response_transform?.code),
              ...(configuration !== undefined && { configuration }),
              ...this.appRef(address, proxy.application_id),
            }),
          ];
        }),
      );
    }
    for (const proxy of proxies) {
      setEntry(this.entries.proxies, proxy.name, { id: proxy.id, hash: contentHash('proxies', proxySpec(proxy)) });
    }
    return proxies;
  }

  /** Names are map keys: of several resources with one name, the first is imported. */
  private unique<T extends { id: string; name: string }>(kind: Kind, items: T[]): T[] {
    return items.filter((item, i) => {
      const first = items.findIndex((other) => other.name === item.name);
      if (first !== i) {
        this.warnings.push(
          `${kind}.${item.name}: another one has this name (${items[first]!.id}); ${item.id} is not imported.`,
        );
      }
      return first === i;
    });
  }

  /** A file name of the resource's name, made safe, not taken yet (case-insensitively). */
  private fileFor(folder: string, name: string, suffix: string): string {
    const base = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '') || 'resource';
    let relative = `${folder}/${base}${suffix}`;
    for (let n = 2; this.taken.has(relative.toLowerCase()); n++) relative = `${folder}/${base}-${n}${suffix}`;
    this.taken.add(relative.toLowerCase());
    return relative;
  }

  private addFile(relative: string, text: string, mode = 0o644): void {
    this.files.push({ absolute: path.resolve(this.dir, relative), text, mode });
  }

  /** A .env file when the values survive the round trip through the parser, else inline (with a warning). */
  private configurationOf(address: string, folder: string, name: string, configuration: Record<string, string>) {
    if (Object.keys(configuration).length === 0) return undefined;
    const text = dotenvText(configuration);
    if (text === undefined) {
      const where = 'it is in svc.yaml (move it out of version control)';
      this.warnings.push(`${address}: a configuration value cannot be written to a .env file; ${where}.`);
      return escapeAll(configuration);
    }
    const relative = this.fileFor(folder, name, '.env');
    this.addFile(relative, text, 0o600);
    return relative;
  }

  /** The name of an imported Application, for a reference to it. */
  private appRef(address: string, id: string | null): { application?: string } {
    if (id === null) return {};
    const name = this.appNames.get(id);
    if (name === undefined) {
      this.warnings.push(`${address}: its Application ${id} is not imported, so the reference is left out.`);
    }
    return name === undefined ? {} : { application: name };
  }
}

/** Without --force, no file that exists is overwritten: all are named, and nothing is written. */
async function refuseExisting(files: PendingFile[], cwd: string): Promise<void> {
  const found = await Promise.all(
    files.map(async (file) => ((await exists(file.absolute)) ? file.absolute : undefined)),
  );
  const existing = found.filter((file) => file !== undefined).map((file) => displayPath(file, cwd));
  if (existing.length > 0) {
    const verb = existing.length === 1 ? 'exists' : 'exist';
    throw new ApplyError(`${existing.join(', ')} already ${verb}; pass --force to overwrite, or --out another file.`);
  }
}

function applicationEntry(app: Application): Record<string, unknown> {
  return {
    type: app.type,
    ...(app.permissions.length > 0 && { permissions: app.permissions }),
    ...(app.rules.length > 0 && {
      rules: app.rules.map((rule) => ({
        ...(rule.description !== undefined && { description: escape(rule.description) }),
        priority: rule.priority,
        container: rule.container,
        transform: rule.transform,
        permissions: rule.permissions,
      })),
    }),
  };
}

function proxyEntry(proxy: Proxy, rest: Record<string, unknown>): Record<string, unknown> {
  return {
    destination_url: escape(proxy.destination_url),
    ...rest,
    ...(!proxy.require_auth && { require_auth: false }),
  };
}

/** svc.yaml interpolates `${env:...}`: a literal `${` in a value is written `$${`. */
function escape(value: string): string {
  // A function replacer: in a replacement string `$$` would itself mean one `$`.
  return value.replaceAll('${', () => '$${');
}

function escapeAll(configuration: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(configuration).map(([key, value]) => [key, escape(value)]));
}

/**
 * The .env text of a configuration, each value quoted in the first way the parser reads back
 * exactly; undefined when some value (or key) cannot be written so.
 */
export function dotenvText(configuration: Record<string, string>): string | undefined {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(configuration)) {
    const line = ["'", '`', '"']
      .map((quote) => `${key}=${quote}${value}${quote}`)
      .find((candidate) => sameValue(parseEnvText(candidate), { [key]: value }));
    if (line === undefined) return undefined;
    lines.push(line);
  }
  const text = `${lines.join('\n')}\n`;
  return sameValue(parseEnvText(text), configuration) ? text : undefined;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
