/**
 * The recorder: an interceptor on the outbound gateway that copies each exchange as it passes (its
 * bodies teed, never consumed for the caller), redacts it by provenance and keeps it in its
 * destination's cassette, written a little after the last change (and on close). Each file is
 * scanned against every secret of the run before it is written (one still holding one is refused,
 * the previous one stays, the reason told without the value), then written beside its place and
 * read back before it takes that place.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { syncDir } from '../../lib/durable-file.js';
import { megabytes } from '../../lib/megabytes.js';
import { CallSecrets } from '../leaks/secrets.js';
import type { OutboundInterceptor, OutboundNext, OutboundOrigin, OutboundRequest } from '../outbound/types.js';
import { type CapturedBody, capturedOf, recordedAnswer, recordedRequest, tee } from './capture.js';
import {
  type Cassette,
  MAX_CASSETTE_BYTES,
  PART_SEPARATOR,
  cassetteFileName,
  cassetteHead,
  cassetteTail,
  exchangePart,
  type RecordedExchange,
} from './cassette.js';
import { matchKey } from './match.js';
import { addConfiguration, decodedViews, findPlaintext, type PlaintextFinding, redactExchange } from './redact.js';
import { type Span, Spool } from './spool.js';

/** Where a cassette is written before it takes its place (a crash may leave it: removed at the next open). */
export const stagedName = (cassette: string) => `.${cassette}.check`;
export const STAGED_NAME = /^\..+\.json\.check$/;

/** How long after an exchange its cassette is written (more exchanges meanwhile are written together). */
export const WRITE_DELAY_MS = 250;
/** A write is followed by a pause at least this many times as long as it took (see schedule). */
const WRITE_SPACING = 4;
/** The exchanges a cassette keeps; later ones are not recorded (a warning says so once). */
export const MAX_EXCHANGES_PER_CASSETTE = 10_000;
const CASSETTE_MODE = 0o644;
/** How many cassettes' worth (of the most one may be) a run keeps in memory, all origins together. */
const RUN_CASSETTES = 4;

/** What an exchange adds to its cassette's file, or a little more (indentation, the file's own lines). */
function partBytes(part: string): number {
  return Buffer.byteLength(part) + 1024;
}

/** What went wrong with a cassette: refused (plaintext found in it), or not written (the disk's error). */
export interface RecordingProblem {
  file: string;
  /** Set when the file was refused: what was found (token ids and forms, never values). */
  findings?: PlaintextFinding[];
  /** Set when the file could not be written, or a cassette is full. */
  error?: string;
}

export interface RecorderOptions {
  dir: string;
  /** Told every problem as it happens (the emulator's events). */
  report?: (problem: RecordingProblem) => void;
  /** Which requests are recorded (svc/testing: one tenant's); default every one. */
  filter?: (origin: OutboundOrigin) => boolean;
  /** Declared test card numbers (digits), left as they are. */
  allowCards?: ReadonlySet<string>;
  writeDelayMs?: number;
  /** The most a cassette file may be (what a replay reads); the run keeps at most four times it. */
  maxCassetteBytes?: number;
}

interface Entry {
  key: string;
  /** When it was sent, in the run: exchanges of one key keep this order. */
  order: number;
  /** Its text as the cassette writes it, kept in the spool. */
  span: Span;
  /** How many values the run's secrets held when it was last found clean of them (-1: never checked). */
  checked: number;
}

interface Tape {
  origin: string;
  entries: Entry[];
  dirty: boolean;
  full: boolean;
  /** What its file will weigh, about (never under). */
  bytes: number;
}

export class Recorder {
  private readonly tapes = new Map<string, Tape>();
  /** The exchanges' texts, on disk (sealed) rather than in memory, until their cassettes are written. */
  private readonly spool = new Spool();
  /** Every secret of the run (and configuration value), for the check of each written file. */
  private readonly runSecrets = new CallSecrets();
  private readonly seenConfigurations = new WeakSet<readonly string[]>();
  private sent = 0;
  /** What every tape weighs (they are held in memory until the run ends). */
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  /** How long the last write of the changed cassettes took. */
  private lastWriteMs = 0;
  private writing: Promise<RecordingProblem[]> = Promise.resolve([]);
  private closed = false;

  constructor(private readonly options: RecorderOptions) {}

  /**
   * A cassette's exchanges kept (replay with on-miss record: what is added goes beside them), card
   * numbers a hand may have written in it masked as a recording's are.
   */
  seed(cassette: Cassette): void {
    const tape = this.tape(cassette.origin);
    for (const edited of cassette.exchanges) {
      const exchange = redactExchange(edited, { allowCards: this.options.allowCards });
      const order = -1_000_000_000 + tape.entries.length;
      const part = exchangePart(exchange);
      tape.entries.push({ key: matchKey(exchange.request), order, span: this.spool.append(part), checked: -1 });
      this.weigh(tape, partBytes(part));
    }
  }

  readonly interceptor: OutboundInterceptor = (request, origin, next) =>
    this.closed || (this.options.filter && !this.options.filter(origin))
      ? next(request)
      : this.observe(request, origin, next);

  /** Sends `request` on, recording the exchange once both bodies have passed. */
  async observe(request: OutboundRequest, origin: OutboundOrigin, next: OutboundNext) {
    const order = ++this.sent;
    let requestBody: Promise<CapturedBody>;
    let sent = request;
    if (request.body instanceof Readable) {
      const stream = request.body;
      requestBody = new Promise((resolve) => {
        sent = { ...request, body: tee(stream, resolve) };
      });
    } else requestBody = Promise.resolve(capturedOf(request.body));
    const response = await next(sent);
    const answered = new Promise<CapturedBody>((resolve) => {
      response.body = tee(response.body, resolve);
    });
    void Promise.all([requestBody, answered]).then(([asked, answer]) => {
      // A body cut off (the caller gave up) is not an exchange to replay.
      if (!asked.complete || !answer.complete) return;
      try {
        this.add(request.url.origin, order, origin, {
          request: recordedRequest(request, asked),
          answer: recordedAnswer(response, answer),
        });
      } catch (error) {
        // Never the emulator's crash: the exchange is not recorded, and that is said.
        const file = path.join(this.options.dir, cassetteFileName(request.url.origin));
        this.options.report?.({ file, error: `an exchange was not recorded: ${(error as Error).message}` });
      }
    });
    return response;
  }

  /** Keeps an exchange (before redaction) of `destination`, sent as the `order`-th of the run. */
  add(destination: string, order: number, origin: OutboundOrigin, exchange: RecordedExchange): void {
    if (this.closed) return;
    if (origin.secrets) this.runSecrets.merge(origin.secrets);
    const configuration = origin.configuration;
    if (configuration && !this.seenConfigurations.has(configuration)) {
      this.seenConfigurations.add(configuration);
      addConfiguration(this.runSecrets, configuration);
    }
    const redacted = redactExchange(exchange, {
      secrets: origin.secrets,
      configuration,
      allowCards: this.options.allowCards,
    });
    const tape = this.tape(destination);
    const part = exchangePart(redacted);
    const full = this.fullness(tape, partBytes(part));
    if (full) {
      if (!tape.full) {
        tape.full = true;
        this.options.report?.({ file: this.fileOf(tape), error: `${full}: later ones are not recorded` });
      }
      return;
    }
    this.weigh(tape, partBytes(part));
    tape.entries.push({ key: matchKey(redacted.request), order, span: this.spool.append(part), checked: -1 });
    tape.dirty = true;
    this.schedule();
  }

  /** Writes every changed cassette now; resolves to the problems of this write. */
  flush(): Promise<RecordingProblem[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(() => this.writeDirty());
    return this.writing;
  }

  /** Stops recording and writes what is left; resolves to the problems of that last write. */
  async close(): Promise<RecordingProblem[]> {
    const problems = await this.flush();
    this.closed = true;
    await this.spool.close();
    return problems;
  }

  /** The bytes of exchanges still in memory, on their way to the spool. */
  get heldBytes(): number {
    return this.spool.pendingBytes;
  }

  private tape(origin: string): Tape {
    let tape = this.tapes.get(origin);
    if (!tape) this.tapes.set(origin, (tape = { origin, entries: [], dirty: false, full: false, bytes: 0 }));
    return tape;
  }

  /** Why `tape` cannot take an exchange of `bytes` more (its count, its file's size, the run's), or undefined. */
  private fullness(tape: Tape, bytes: number): string | undefined {
    const most = this.options.maxCassetteBytes ?? MAX_CASSETTE_BYTES;
    if (tape.entries.length >= MAX_EXCHANGES_PER_CASSETTE)
      return `it holds ${MAX_EXCHANGES_PER_CASSETTE} exchanges, the most a cassette keeps`;
    if (tape.bytes + bytes > most) return `it would be over ${megabytes(most)}, the most a cassette may be`;
    if (this.bytes + bytes > RUN_CASSETTES * most)
      return `the run's cassettes would be over ${megabytes(RUN_CASSETTES * most)}, the most a recording keeps`;
    return undefined;
  }

  private weigh(tape: Tape, bytes: number): void {
    tape.bytes += bytes;
    this.bytes += bytes;
  }

  private fileOf(tape: Tape): string {
    return path.join(this.options.dir, cassetteFileName(tape.origin));
  }

  /**
   * The next write, a little after a change: and at least WRITE_SPACING times as long after the
   * last write as that write took, so that rewriting a large cassette (it is written whole) takes
   * a bounded share of the emulator's time however fast exchanges come.
   */
  private schedule(): void {
    if (this.timer !== undefined) return;
    const delay = Math.max(this.options.writeDelayMs ?? WRITE_DELAY_MS, this.lastWriteMs * WRITE_SPACING);
    this.timer = setTimeout(() => void this.flush(), delay);
    this.timer.unref();
  }

  private async writeDirty(): Promise<RecordingProblem[]> {
    const started = performance.now();
    try {
      return await this.writeChanged();
    } finally {
      this.lastWriteMs = performance.now() - started;
    }
  }

  private async writeChanged(): Promise<RecordingProblem[]> {
    const problems: RecordingProblem[] = [];
    for (const tape of this.tapes.values()) {
      if (!tape.dirty) continue;
      tape.dirty = false;
      // A failure of its own (the spool unreadable) is said as the cassette's problem, never thrown:
      // this runs from a timer, and a rejection there would end the emulator.
      const problem = await this.write(tape).catch((error: Error) => {
        tape.dirty = true;
        return { file: this.fileOf(tape), error: error.message };
      });
      if (problem) {
        problems.push(problem);
        this.options.report?.(problem);
      }
    }
    return problems;
  }

  /**
   * Checks a tape's cassette against every plaintext of the run before any of it reaches the disk
   * (refused: nothing is written, the previous file stays), writes it beside its place, reads it
   * back (the disk holds exactly what was checked), and only then puts it in place. One exchange at
   * a time, read from the spool: neither the cassette nor its check is ever whole in memory, and an
   * exchange already found clean is checked again only once the run's secrets have grown.
   */
  private async write(tape: Tape): Promise<RecordingProblem | undefined> {
    const file = this.fileOf(tape);
    const staged = path.join(this.options.dir, stagedName(path.basename(file)));
    const entries = [...tape.entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.order - b.order));
    const head = cassetteHead(tape.origin, entries.length);
    const findings = await this.check(head, entries);
    if (findings.length > 0) {
      const unique = new Map(findings.map((finding) => [JSON.stringify(finding), finding]));
      return { file, findings: [...unique.values()] };
    }
    try {
      const written = await this.writeStaged(staged, head, entries, cassetteTail(entries.length));
      const read = createHash('sha256');
      for await (const chunk of createReadStream(staged)) read.update(chunk as Buffer);
      if (read.digest('hex') !== written) throw new Error('it read back otherwise than it was written');
      await rename(staged, file);
      await syncDir(this.options.dir);
      return undefined;
    } catch (error) {
      await unlink(staged).catch(() => {});
      // Tried again with the next change.
      tape.dirty = true;
      return { file, error: (error as Error).message };
    }
  }

  /** What of the run's plaintext the cassette's text holds, as it is and decoded (percent-encoding, JSON escapes, bytes). */
  private async check(head: string, entries: Entry[]): Promise<PlaintextFinding[]> {
    const sources = { secrets: this.runSecrets, allowCards: this.options.allowCards };
    const known = this.runSecrets.size;
    const findings = findPlaintext(head, sources);
    for (const entry of entries) {
      // With no value of the run to look for, there is nothing to find (and no views to decode).
      if (entry.checked === known || known === 0) continue;
      const part = await this.spool.read(entry.span);
      const found = findPlaintext(part, sources);
      for (const view of decodedViews([JSON.parse(part) as RecordedExchange]))
        found.push(...findPlaintext(view, sources));
      if (found.length === 0) entry.checked = known;
      findings.push(...found);
    }
    return findings;
  }

  /** Writes the cassette to `staged` (a new file), flushed to the disk; answers the SHA-256 of what it wrote. */
  private async writeStaged(staged: string, head: string, entries: Entry[], tail: string): Promise<string> {
    const hash = createHash('sha256');
    const handle = await open(staged, 'w', CASSETTE_MODE);
    try {
      const write = async (text: string) => {
        const bytes = Buffer.from(text, 'utf8');
        hash.update(bytes);
        await handle.write(bytes);
      };
      await write(head);
      for (const [at, entry] of entries.entries()) {
        if (at > 0) await write(PART_SEPARATOR);
        await write(await this.spool.read(entry.span));
      }
      await write(tail);
      await handle.chmod(CASSETTE_MODE);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return hash.digest('hex');
  }
}
