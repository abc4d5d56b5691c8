import { type Readable, Transform } from 'node:stream';

/** What went through a tapped stream: its first bytes (up to the limit), how many in all, and whether it ended. */
export interface StreamHead {
  head: Buffer;
  size: number;
  /** False when it was cut off (an error, or its reader gave up) before its end. */
  complete: boolean;
}

/**
 * `stream` passed on as it is, its first `limit` bytes kept on the way; `done` is told once, when it
 * ends or is cut off. Either side's end is the other's: an error of the source fails the reader, and
 * a reader that gives up ends the source.
 */
export function tapHead(stream: Readable, limit: number, done: (body: StreamHead) => void): Readable {
  const head: Buffer[] = [];
  let size = 0;
  let told = false;
  const tell = (complete: boolean) => {
    if (told) return;
    told = true;
    done({ head: Buffer.concat(head), size, complete });
  };
  const tap = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (size + bytes.length <= limit) head.push(bytes);
      // A copy of the part kept: a slice would hold the whole chunk in memory.
      else if (size < limit) head.push(Buffer.from(bytes.subarray(0, limit - size)));
      size += bytes.length;
      callback(null, bytes);
    },
    flush(callback) {
      tell(true);
      callback();
    },
  });
  // Wired by hand, not with stream.pipeline: pipeline makes an AbortController (and its DOMException)
  // for every stream, a sixth of a proxy call's own time when every answer is tapped.
  stream.once('error', (error) => tap.destroy(error));
  stream.once('close', () => {
    if (!stream.readableEnded) tap.destroy();
  });
  // The reader hears the source's error (as through a pipeline); with no reader listening, it is not thrown.
  tap.on('error', () => {});
  tap.once('close', () => {
    if (!stream.readableEnded && !stream.destroyed) stream.destroy();
    tell(false);
  });
  stream.pipe(tap);
  return tap;
}
