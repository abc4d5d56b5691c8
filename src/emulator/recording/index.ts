/**
 * Recording and replaying destinations (`svc serve --record DIR`, `--replay DIR`, svc/testing's
 * `t.destinations.record(dir)` and `replay(dir)`): the recorder and the replayer set on the outbound
 * gateway, the cassettes loaded (every one checked: one that cannot be used fails the whole set, in
 * one line naming it), and what a write refused said as events.
 */
import { makeDirectory } from '../../lib/make-directory.js';
import { constants } from 'node:fs';
import { access, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Teardown } from '../../lib/teardown.js';
import { EmulatorError } from '../errors.js';
import type { EmitEvent } from '../events.js';
import type { OutboundInterceptor, OutboundOrigin } from '../outbound/types.js';
import { type Cassette, CassetteError, readCassette } from './cassette.js';
import { Recorder, type RecordingProblem, STAGED_NAME } from './recorder.js';
import { ON_MISS, type OnMiss, Replayer } from './replayer.js';

export { CASSETTE_VERSION, type Cassette, cassetteFileName, parseCassette, serializeCassette } from './cassette.js';
export type { RecordedAnswer, RecordedExchange, RecordedRequest } from './cassette.js';
export { findPlaintext, redactExchange, redactForRecording, type RedactionSources } from './redact.js';
export { matchKey } from './match.js';
export { Recorder, type RecordingProblem } from './recorder.js';
export { ON_MISS, type OnMiss, Replayer } from './replayer.js';

export interface RecordOptions {
  /** The folder the cassettes are written to (made if missing). */
  dir: string;
}

export interface ReplayOptions {
  /** The folder the cassettes are read from. */
  dir: string;
  /** What a request no cassette answers gets: a problem (`fail`, the default), the network, or the network recorded. */
  onMiss?: OnMiss;
}

/** A setup problem (a folder that cannot be read or written, a cassette that cannot be used): one line. */
export class RecordingSetupError extends Error {
  override readonly name = 'RecordingSetupError';
  constructor(
    /** `record.dir` or `replay.dir`. */
    readonly option: 'record.dir' | 'replay.dir',
    message: string,
  ) {
    super(message);
  }
}

export interface RecordingSetup {
  record?: RecordOptions | undefined;
  replay?: ReplayOptions | undefined;
  /** Adds an interceptor to the gateway (returns what removes it). */
  use: (interceptor: OutboundInterceptor) => () => void;
  /** Told every problem of a write. */
  report?: (problem: RecordingProblem) => void;
  /** Which requests it applies to (svc/testing: one tenant's). */
  filter?: (origin: OutboundOrigin) => boolean;
  allowCards?: ReadonlySet<string>;
}

/** What was set up: writes pending cassettes now, or on close (after which nothing is recorded or replayed). */
export interface OpenedRecording {
  flush(): Promise<RecordingProblem[]>;
  close(): Promise<RecordingProblem[]>;
}

/** Sets up recording or replay; rejects with a RecordingSetupError before anything is attached. */
export async function openRecording(setup: RecordingSetup): Promise<OpenedRecording> {
  const { record, replay } = setup;
  const shared = {
    ...(setup.report && { report: setup.report }),
    ...(setup.filter && { filter: setup.filter }),
    ...(setup.allowCards && { allowCards: setup.allowCards }),
  };
  let recorder: Recorder | undefined;
  let replayer: Replayer | undefined;
  if (replay) {
    const onMiss = replay.onMiss ?? 'fail';
    if (!ON_MISS.includes(onMiss))
      throw new RecordingSetupError(
        'replay.dir',
        `onMiss must be one of ${ON_MISS.join(', ')}, not ${String(onMiss)}.`,
      );
    const cassettes = await loadCassettes(replay.dir);
    if (onMiss === 'record') {
      await writableDir(replay.dir, 'replay.dir');
      claimDir(replay.dir, 'replay.dir');
      await removeStaged(replay.dir);
      recorder = new Recorder({ dir: replay.dir, ...shared });
      for (const cassette of cassettes) recorder.seed(cassette);
    }
    replayer = new Replayer(cassettes, { dir: replay.dir, onMiss, ...(recorder && { recorder }), ...shared });
  } else if (record) {
    await writableDir(record.dir, 'record.dir');
    claimDir(record.dir, 'record.dir');
    await removeStaged(record.dir);
    recorder = new Recorder({ dir: record.dir, ...shared });
  }
  const written = recorder && (replay?.dir ?? record?.dir);
  const removers = [replayer ?? recorder]
    .filter((part) => part !== undefined)
    .map((part) => setup.use(part.interceptor));
  const flush = async () => (recorder ? recorder.flush() : []);
  return {
    flush,
    async close() {
      for (const remove of removers) remove();
      try {
        return recorder ? await recorder.close() : [];
      } finally {
        if (written !== undefined) recordedDirs.delete(path.resolve(written));
      }
    },
  };
}

/** Every cassette of `dir` (its `.json` files), each checked. */
export async function loadCassettes(dir: string): Promise<Cassette[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new RecordingSetupError('replay.dir', `${dir} cannot be read as a folder of cassettes: ${reason(error)}.`);
  }
  const cassettes: Cassette[] = [];
  for (const name of names.filter((file) => file.endsWith('.json') && !file.startsWith('.')).sort()) {
    try {
      cassettes.push(await readCassette(path.join(dir, name)));
    } catch (error) {
      if (error instanceof CassetteError) throw new RecordingSetupError('replay.dir', error.message);
      throw new RecordingSetupError('replay.dir', `${path.join(dir, name)} cannot be read: ${reason(error)}.`);
    }
  }
  return cassettes;
}

/**
 * The folders being recorded to in this process: two recordings of one folder (two tenants of a
 * test run) would each write its own cassettes over the other's, losing exchanges.
 */
const recordedDirs = new Set<string>();

function claimDir(dir: string, option: 'record.dir' | 'replay.dir'): void {
  const resolved = path.resolve(dir);
  if (recordedDirs.has(resolved))
    throw new RecordingSetupError(
      option,
      `${dir} is being recorded to by another recording: give each its own folder, or stop the other first.`,
    );
  recordedDirs.add(resolved);
}

/**
 * The files a write stages beside its cassette (`.<cassette>.json.check`, recorder.ts) that a crash
 * left: removed as a recording opens the folder (this process records there alone: claimDir).
 */
async function removeStaged(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => []);
  for (const name of names) if (STAGED_NAME.test(name)) await unlink(path.join(dir, name)).catch(() => {});
}

async function writableDir(dir: string, option: 'record.dir' | 'replay.dir'): Promise<void> {
  try {
    await makeDirectory(dir);
    await access(dir, constants.W_OK);
  } catch (error) {
    throw new RecordingSetupError(option, `${dir} cannot be written to: ${reason(error)}.`);
  }
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'it does not exist';
  // mkdir of a path that is a file: EEXIST.
  if (code === 'ENOTDIR' || code === 'EEXIST') return 'it is not a folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

/** A problem of a write as the emulator's events say it: a `leak` event per finding and one error line. */
export function reportRecordingProblem(emit: EmitEvent, problem: RecordingProblem): void {
  if (problem.findings) {
    for (const finding of problem.findings)
      emit({
        type: 'leak',
        traceId: '',
        place: 'recording',
        ...(finding.tokenId !== undefined && { tokenId: finding.tokenId }),
        form: finding.form,
        ...(finding.last4 !== undefined && { last4: finding.last4 }),
        action: 'refused',
      });
    emit({ type: 'error', message: refusalMessage(problem) });
  } else emit({ type: 'error', message: `Recording: ${problem.file} was not written: ${problem.error}.` });
}

/** `Recording refused: DIR/x.json would hold plaintext (token tok_1 as base64, a card ****4242); the previous file is kept.` */
export function refusalMessage(problem: RecordingProblem): string {
  const found = (problem.findings ?? []).map((finding) =>
    finding.form === 'card'
      ? `a card number ****${finding.last4 ?? ''} no token explains`
      : finding.tokenId === 'configuration'
        ? `a configuration value (${finding.form})`
        : `token ${finding.tokenId ?? '?'} (${finding.form})`,
  );
  const listed = [...new Set(found)];
  return `Recording refused: ${problem.file} would hold plaintext of the run: ${listed.join(', ')}; the previous file is kept.`;
}

/**
 * The emulator's recording or replay (EmulatorOptions `record`, `replay`), set on its gateway at the
 * start; its cassettes are written last on dispose (after the requests in flight have ended).
 */
export async function attachRecording(ctx: {
  options: { record?: RecordOptions | undefined; replay?: ReplayOptions | undefined; leakGuardAllow?: string[] };
  gateway: { use(interceptor: OutboundInterceptor): () => void };
  emit: EmitEvent;
  teardown: Teardown;
}): Promise<void> {
  const { record, replay, leakGuardAllow } = ctx.options;
  if (!record && !replay) return;
  let opened: OpenedRecording;
  try {
    opened = await openRecording({
      record,
      replay,
      use: (interceptor) => ctx.gateway.use(interceptor),
      report: (problem) => reportRecordingProblem(ctx.emit, problem),
      ...(leakGuardAllow && { allowCards: new Set(leakGuardAllow.map((card) => card.replace(/[ -]/g, ''))) }),
    });
  } catch (error) {
    if (!(error instanceof RecordingSetupError)) throw error;
    throw new EmulatorError((name) => `${name(error.option)}: ${error.message}`, { option: error.option });
  }
  ctx.teardown.push(async () => {
    await opened.close();
  });
}

/** What of `record` and `replay` cannot work, as options.ts refuses it (option, reason), or undefined. */
export function recordingOptionsProblem(
  record: RecordOptions | undefined,
  replay: ReplayOptions | undefined,
): { option: string; reason: string } | undefined {
  if (record !== undefined && (typeof record?.dir !== 'string' || record.dir === ''))
    return { option: 'record.dir', reason: 'must name a folder.' };
  if (replay !== undefined && (typeof replay?.dir !== 'string' || replay.dir === ''))
    return { option: 'replay.dir', reason: 'must name a folder.' };
  if (replay?.onMiss !== undefined && !ON_MISS.includes(replay.onMiss))
    return { option: 'replay.onMiss', reason: `must be one of ${ON_MISS.join(', ')}, not ${String(replay.onMiss)}.` };
  if (record !== undefined && replay !== undefined)
    return {
      option: 'record.dir',
      reason: 'cannot be used with replay: to record what a replay misses, give replay.onMiss "record".',
    };
  return undefined;
}
