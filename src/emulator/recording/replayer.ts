/**
 * Replay: an interceptor on the outbound gateway answering from cassettes, at once (no recorded
 * delay, no retry slept). A request is redacted as a recording is and matched by method, origin,
 * path, query and body, its expressions numbered (recordings.match.ts); identical requests take the
 * recorded answers in order. What no cassette answers fails with a problem of its own type, goes to
 * the network (`passthrough`), or goes there and is recorded beside the rest (`record`).
 */
import { Readable } from 'node:stream';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import type { OutboundInterceptor, OutboundNext, OutboundOrigin, OutboundRequest } from '../outbound/types.js';
import { bodyBytes, capturedOf, recordedHeaders, recordedRequest } from './capture.js';
import { type Cassette, cassetteFileName, type RecordedAnswer } from './cassette.js';
import { matchKey } from './match.js';
import type { Recorder } from './recorder.js';
import { redactExchange } from './redact.js';
import { readAll } from '../../lib/read-all.js';

export type OnMiss = 'fail' | 'passthrough' | 'record';
export const ON_MISS: readonly OnMiss[] = ['fail', 'passthrough', 'record'];

export interface ReplayerOptions {
  /** Where the cassettes are (named in a miss's problem). */
  dir: string;
  onMiss: OnMiss;
  /** With `record`: where what was missed is recorded (seeded with the cassettes). */
  recorder?: Recorder;
  /** Which requests are replayed (svc/testing: one tenant's); default every one. */
  filter?: (origin: OutboundOrigin) => boolean;
  /** Declared test card numbers (digits), left as they are. */
  allowCards?: ReadonlySet<string>;
}

/** The recorded answers of one request, taken in order. */
interface Answers {
  answers: RecordedAnswer[];
  used: number;
}

export class Replayer {
  /** Origin -> match key -> answers. */
  private readonly index = new Map<string, Map<string, Answers>>();

  constructor(
    cassettes: readonly Cassette[],
    private readonly options: ReplayerOptions,
  ) {
    for (const cassette of cassettes) {
      let byKey = this.index.get(cassette.origin);
      if (!byKey) this.index.set(cassette.origin, (byKey = new Map()));
      for (const exchange of cassette.exchanges) {
        // As a request is seen (a hand-edited cassette's card or api_key masked as today's are).
        const key = matchKey(redactExchange(exchange, { allowCards: options.allowCards }).request);
        const { answer } = exchange;
        const found = byKey.get(key);
        if (found) found.answers.push(answer);
        else byKey.set(key, { answers: [answer], used: 0 });
      }
    }
  }

  readonly interceptor: OutboundInterceptor = (request, origin, next) =>
    this.options.filter && !this.options.filter(origin) ? next(request) : this.replay(request, origin, next);

  private async replay(request: OutboundRequest, origin: OutboundOrigin, next: OutboundNext) {
    // Read whole (user code may write its body over time), so that it can be matched.
    const body = request.body instanceof Readable ? await readAll(request.body) : request.body;
    const whole = body === request.body ? request : { ...request, body };
    const seen = redactExchange(
      { request: recordedRequest(request, capturedOf(body)), answer: { status: 200, headers: {} } },
      { secrets: origin.secrets, configuration: origin.configuration, allowCards: this.options.allowCards },
    ).request;
    const destination = request.url.origin;
    const found = this.index.get(destination)?.get(matchKey(seen));
    const answer = found?.answers[found.used];
    const bytes = answer && bodyBytes(answer);
    if (found && answer && bytes) {
      found.used += 1;
      // Framing is the replayer's own, whatever a (hand-edited) cassette says, in whatever case.
      const headers = { ...recordedHeaders(answer.headers), 'content-length': String(bytes.length) };
      return { status: answer.status, headers, body: Readable.from(bytes.length > 0 ? [bytes] : []) };
    }
    const why = !found
      ? 'no recorded exchange matches it'
      : !answer
        ? `its ${found.answers.length} recorded answer${found.answers.length === 1 ? ' was' : 's were'} used`
        : 'its answer was recorded without its body (over the size a recording keeps)';
    switch (this.options.onMiss) {
      case 'passthrough':
        return next(whole);
      case 'record':
        return this.options.recorder ? this.options.recorder.observe(whole, origin, next) : next(whole);
      default:
        throw this.missed(seen.method, destination, `${seen.path}${seen.query ? `?${seen.query}` : ''}`, why);
    }
  }

  /** The problem of a request no cassette answers: what was asked (redacted), and where it was looked for. */
  private missed(method: string, destination: string, path: string, why: string): HttpError {
    const cassette = `${this.options.dir}/${cassetteFileName(destination)}`;
    const error = new HttpError(
      502,
      `Replay: ${method} ${destination}${path} has no recorded answer in ${cassette} (${why}). ` +
        'Record it again (svc serve --record), or let such requests through with --on-miss passthrough or record.',
      {
        type: PROBLEM_TYPES.replayMiss,
        title: 'No recorded answer',
        extensions: { method, origin: destination, path, cassette },
      },
    );
    // User code's request fails with this code (and the detail as its message).
    return Object.assign(error, { code: 'ERR_SVC_REPLAY_MISS' });
  }
}
