import type { Duplex } from 'node:stream';

/**
 * Length-prefixed JSON frames over one stream, between the emulator and a sandbox process.
 *
 * Node's own IPC channel buffers a message until its closing newline, however long it grows: a
 * sandbox that got hold of its end could then fill the emulator's memory. Here every frame declares
 * its length first, and one over `maxFrameBytes` ends the channel (the other side is then stopped).
 */
export class Channel<In, Out> {
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  /** The length of the frame being read, once its header is. */
  private expected: number | undefined;
  private closed = false;
  /** Frames held until the turn ends, once a frame was written in it; undefined when none was. */
  private queued: string[] | undefined;
  /** Their length (in UTF-16 units: about their bytes). */
  private queuedLength = 0;
  private readonly flush = () => {
    const queued = this.queued;
    this.queued = undefined;
    this.queuedLength = 0;
    if (!this.closed && queued !== undefined && queued.length > 0) this.stream.write(frames(queued));
  };

  constructor(
    private readonly stream: Duplex,
    private readonly maxFrameBytes: number,
    private readonly handlers: {
      message: (message: In, bytes: number) => void;
      broken: (reason: string) => void;
      /** The first bytes of a frame arrived (before it is read whole and parsed). */
      frameStarts?: () => void;
      /** What was written has all been taken by the other side (after a backlog). */
      drain?: () => void;
    },
  ) {
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
    if (handlers.drain) stream.on('drain', handlers.drain);
    stream.on('error', (error) => this.break(`channel error: ${error.message}`));
    stream.on('close', () => this.break('channel closed'));
  }

  /** The bytes sent and not yet taken by the other side (about: frames of this turn by their length). */
  get backlog(): number {
    return this.stream.writableLength + this.queuedLength;
  }

  send(message: Out): boolean {
    return this.sendText(JSON.stringify(message));
  }

  /**
   * A frame whose JSON the caller built (a message of type Out, written out). The first frame of a
   * turn of the event loop is written at once; the frames sent after it in the same turn (calls
   * that arrived together, under load) are written together when the turn ends: one write, and one
   * wake-up of the reader, for many messages.
   */
  sendText(text: string): boolean {
    if (this.closed) return false;
    if (this.queued !== undefined) {
      this.queued.push(text);
      this.queuedLength += text.length;
      return true;
    }
    this.queued = [];
    setImmediate(this.flush);
    this.stream.write(frames([text]));
    return true;
  }

  close(): void {
    this.closed = true;
    this.stream.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    if (this.bufferedBytes === 0 && this.expected === undefined) this.handlers.frameStarts?.();
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    for (;;) {
      if (this.expected === undefined) {
        if (this.bufferedBytes < 4) return;
        const length = this.take(4).readUInt32BE(0);
        if (length > this.maxFrameBytes)
          return this.break(`a frame of ${length} bytes is over the limit of ${this.maxFrameBytes}`);
        this.expected = length;
      }
      // Chunks are joined once, when the whole frame is there: a large frame costs its size, not its size squared.
      if (this.bufferedBytes < this.expected) return;
      const frame = this.take(this.expected);
      this.expected = undefined;
      let message: In;
      try {
        message = JSON.parse(frame.toString('utf8')) as In;
      } catch {
        return this.break('a frame is not JSON');
      }
      this.handlers.message(message, frame.length);
      if (this.closed) return;
    }
  }

  /** The next `bytes` bytes buffered, taken out of the buffer. */
  private take(bytes: number): Buffer {
    const joined = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes);
    const rest = joined.subarray(bytes);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.bufferedBytes = rest.length;
    return joined.subarray(0, bytes);
  }

  private break(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.buffered = [];
    this.stream.destroy();
    this.handlers.broken(reason);
  }
}

/** Length-prefixed frames of `texts`, in one buffer. */
function frames(texts: string[]): Buffer {
  let total = 0;
  const lengths = texts.map((text) => {
    const length = Buffer.byteLength(text);
    total += 4 + length;
    return length;
  });
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    out.writeUInt32BE(lengths[i]!, at);
    at = out.write(texts[i]!, at + 4) + at + 4;
  }
  return out;
}
