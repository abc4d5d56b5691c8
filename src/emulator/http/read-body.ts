import type { IncomingMessage } from 'node:http';

/** The codes of a body that cannot be read, as problems.ts maps them. */
function bodyError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, statusCode: code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 413 : 400 });
}

/**
 * A request body's bytes: refused past `limit` (at once when Content-Length says so), and checked
 * against its Content-Length once whole. `done` is called once.
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  done: (error: Error | null, body?: Buffer) => void,
): void {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    done(bodyError('FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large'));
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stop();
      done(bodyError('FST_ERR_CTP_BODY_TOO_LARGE', 'Request body is too large'));
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (error?: Error & { statusCode?: number }) => {
    stop();
    if (error) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      done(error);
      return;
    }
    if (!Number.isNaN(declared) && received !== declared) {
      done(bodyError('FST_ERR_CTP_INVALID_CONTENT_LENGTH', 'Request body size did not match Content-Length'));
      return;
    }
    done(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
  };
  const stop = () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onEnd);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onEnd);
  req.resume();
}
