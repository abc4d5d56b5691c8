import { isIPv4 } from 'node:net';
import { DEFAULT_PORT } from '../api/defaults.js';
import { MAX_NAME_LENGTH } from '../api/limits.js';
import { GIVEN_KEY_PATTERN } from '../api/patterns.js';
import { type QuotaSettings, quotaProblem } from '../api/quotas.js';
import { TIERS, type Tier } from '../api/tiers.js';
import { EmulatorError, type OptionNamer } from './errors.js';
import type { EventListener } from './events.js';
import type { LeakMode } from './leaks/guard.js';
import { leakOptionsProblem } from './leaks/options.js';
import type { InspectOptions, RuntimeOptions } from './runtime/index.js';
import type { Clock } from './services/applications.js';
import { type RecordOptions, type ReplayOptions, recordingOptionsProblem } from './recording/index.js';
import type { ResultOptions } from './services/reactor-results.js';
import type { WebhookOptions } from './services/webhooks.js';
import type { StoreFileSystem } from './store/io.js';

export interface EmulatorOptions {
  /** Default 8790; 0 picks a free port. */
  port?: number;
  host?: string;
  /** The data file; default `.svc/data.json` (relative to the process's cwd). */
  data?: string;
  inMemory?: boolean;
  /** Keys the bootstrap Applications must use (else generated on first start). */
  managementKey?: string;
  privateKey?: string;
  tier?: Tier;
  /** How long a transaction stays open (default 1 h). */
  transactionTtlMs?: number;
  /** Base64 of the 32-byte key that encrypts token data (default: `master.key` beside the data file). */
  masterKey?: string;
  /** The sandbox: where npm packages resolve from, its processes and limits (see RuntimeOptions). */
  runtime?: Omit<RuntimeOptions, 'onLog' | 'inspect'> & { prewarm?: boolean };
  /**
   * A debugger attaches to the sandbox on 127.0.0.1:`port` (0: a free one, in `ready.inspectPort`):
   * it runs without Node's permission model, with no timeouts, one process (README "Debugging
   * reactor and transform code"). For one's own code only.
   */
  inspect?: InspectOptions;
  /** The synchronous reactor timeout (30 s, as on the platform). */
  syncTimeoutMs?: number;
  /** Webhook delivery: attempts, backoff, per-attempt timeout, attempts at once (all tenants, one tenant). */
  webhooks?: WebhookOptions;
  /** Asynchronous results: kept `retentionMs` after their delivery ends (24 h), at most `maxPerTenant` (10,000). */
  results?: ResultOptions;
  /** A client must send a whole request (headers and body) within this; else 408 (default 30 s). */
  requestTimeoutMs?: number;
  /** ... and its headers within this (default 10 s). */
  headersTimeoutMs?: number;
  /** On dispose, requests in flight (proxied and reactor calls included) get this long to finish (default 10 s). */
  shutdownGraceMs?: number;
  debug?: boolean;
  /**
   * Ignored: every route has one path now (it chose between two HTTP paths, when there were two).
   * Still accepted, so that code that passes it keeps working.
   */
  leanRoutes?: boolean;
  /** Subscribes to the emulator's events from the start (see Emulator.events). */
  onEvent?: EventListener;
  /** Records every exchange with a destination to cassettes in `dir`, redacted (one file per origin). */
  record?: RecordOptions;
  /** Answers destinations from the cassettes in `dir`; `onMiss`: fail (default), passthrough or record. */
  replay?: ReplayOptions;
  /**
   * The leak guard (README "Leak guard"): `warn` (default) tells of a call's plaintext in its answer or
   * its code's requests with a `leak` event, `fail` answers the call with a leak problem, `off` checks
   * neither and tells nothing. Logs, events and recordings are redacted in every mode.
   */
  leakGuard?: LeakMode;
  /** Declared test card numbers the card scan leaves alone (a token's value is found whatever this says). */
  leakGuardAllow?: string[];
  /** Hosts a call's code may send its plaintext to (a payment provider): `api.example.com` or `*.example.com`. */
  leakGuardAllowHosts?: string[];
  /**
   * Storage quotas (README "Quotas"): the bytes of records a tenant may keep, by kind (`tokens`,
   * `results`, `transactions`, `resources`), in all (`tenant`), and all tenants together (`total`);
   * each a number of bytes or a size (`'512MB'`, `'1GB'`). A write past one answers 507.
   */
  quotas?: QuotaSettings;
  /** The file operations of the store's writes (default node:fs); tests inject disk failures here. */
  fileSystem?: StoreFileSystem;
  clock?: Clock;
}

/** Refuses options that cannot work, before anything opens; each message names its option (`options.port`). */
export function checkOptions(options: EmulatorOptions): void {
  const refuse = (option: string, reason: string | ((name: OptionNamer) => string)) =>
    new EmulatorError((name) => `${name(option)} ${typeof reason === 'string' ? reason : reason(name)}`, { option });
  for (const [option, key] of [
    ['managementKey', options.managementKey],
    ['privateKey', options.privateKey],
  ] as const) {
    if (key !== undefined && !GIVEN_KEY_PATTERN.test(key)) {
      throw refuse(option, 'must be 16 to 256 characters of letters, digits, "_", "-" or ".".');
    }
  }
  if (options.managementKey !== undefined && options.managementKey === options.privateKey) {
    throw refuse('privateKey', (name) => `must differ from ${name('managementKey')}.`);
  }
  const inspectPort = options.inspect?.port;
  if (options.inspect && !(Number.isInteger(inspectPort) && inspectPort! >= 0 && inspectPort! <= 65535))
    throw refuse('inspect.port', `must be a whole number from 0 to 65535, not ${inspectPort}.`);
  if (options.inspect && options.host !== undefined && !isLoopbackHost(options.host))
    // The debugger itself listens on 127.0.0.1, but reactor code runs without the permission model: any
    // API caller who can reach the emulator would run code on this machine as its user.
    throw refuse(
      'inspect',
      (name) =>
        `cannot be used with ${name('host')} ${options.host}: without the permission model, reactor code anyone sends to the emulator would run as this machine's user. Use ${name('host')} 127.0.0.1 (an SSH tunnel reaches it from elsewhere).`,
    );
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw refuse('port', `must be a whole number from 0 to 65535, not ${port}.`);
  }
  for (const [name, value] of [
    ['requestTimeoutMs', options.requestTimeoutMs],
    ['headersTimeoutMs', options.headersTimeoutMs],
    ['shutdownGraceMs', options.shutdownGraceMs],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw refuse(name, 'must be a whole number of milliseconds, at least 1.');
  }
  const ttl = options.transactionTtlMs;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1000)) {
    throw refuse('transactionTtlMs', `must be at least 1000 (1 s), not ${ttl}.`);
  }
  for (const [name, value] of [
    ['results.retentionMs', options.results?.retentionMs],
    ['results.maxPerTenant', options.results?.maxPerTenant],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw refuse(name, `must be a whole number above 0, not ${value}.`);
  }
  for (const [kind, value] of Object.entries(options.quotas ?? {})) {
    const problem = quotaProblem(kind, value);
    if (problem) throw refuse(`quotas.${kind}`, problem);
  }
  const recording = recordingOptionsProblem(options.record, options.replay);
  if (recording) throw refuse(recording.option, recording.reason);
  const leaks = leakOptionsProblem(options);
  if (leaks) throw refuse(leaks.option, leaks.reason);
  if (options.tier !== undefined && !TIERS.includes(options.tier)) {
    throw refuse('tier', `must be one of ${TIERS.join(', ')}.`);
  }
}

/** A host only this machine reaches: localhost, 127.0.0.0/8, ::1 (or 127.x written as IPv6). */
function isLoopbackHost(host: string): boolean {
  const address = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (address === 'localhost' || address === '::1') return true;
  const v4 = address.replace(/^::ffff:/, '');
  return isIPv4(v4) && v4.startsWith('127.');
}

/** What `emulator.tenants.create` takes: the tenant's name, and the keys of its two Applications if given. */
export interface TenantSpec {
  name?: string;
  managementKey?: string;
  privateKey?: string;
}

/** Refuses a tenant spec the admin route would refuse; each message names its field (`spec.managementKey`). */
export function checkTenantSpec(spec: TenantSpec): void {
  const refuse = (field: string, reason: string) => new EmulatorError(`spec.${field} ${reason}`, { option: field });
  if (
    spec.name !== undefined &&
    (typeof spec.name !== 'string' || spec.name.length < 1 || spec.name.length > MAX_NAME_LENGTH)
  )
    throw refuse('name', `must be 1 to ${MAX_NAME_LENGTH} characters.`);
  for (const field of ['managementKey', 'privateKey'] as const) {
    const key = spec[field];
    if (key !== undefined && (typeof key !== 'string' || !GIVEN_KEY_PATTERN.test(key)))
      throw refuse(field, 'must be 16 to 256 characters of letters, digits, "_", "-" or ".".');
  }
  if (spec.managementKey !== undefined && spec.managementKey === spec.privateKey)
    throw refuse('privateKey', 'must differ from spec.managementKey.');
}
