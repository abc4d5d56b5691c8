import net from 'node:net';
import { onTestFinished } from 'vitest';

export interface RawResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: string;
}

/** One TCP connection to a server, written byte for byte, its answers read one by one. */
export interface RawConnection {
  send(data: string | Buffer): void;
  /** Sends `data` (if any) and half-closes: the server sees the end of what this client will send. */
  end(data?: string | Buffer): void;
  /** The next complete answer, or 'closed' when the server closed the connection first. */
  next(timeoutMs?: number): Promise<RawResponse | 'closed'>;
  /** Whether the server reset the connection (rather than closing it cleanly). */
  readonly reset: boolean;
  /** Resolves once the server has closed the connection. */
  readonly closed: Promise<void>;
  destroy(): void;
}

/** Opens a connection to `url`'s host and port (destroyed when the test ends). */
export async function rawConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  onTestFinished(() => void socket.destroy());
  let buffer = Buffer.alloc(0);
  let ended = false;
  let reset = false;
  let wake: (() => void) | undefined;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake?.();
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE') reset = true;
  });
  socket.on('close', () => {
    ended = true;
    wake?.();
  });

  /** Takes one whole answer off the buffer, if one is there (Content-Length or chunked; none for 204/304). */
  const take = (): RawResponse | undefined => {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const at = line.indexOf(':');
      headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const chunks: Buffer[] = [];
      for (let at = end + 4; ; ) {
        const lineEnd = buffer.indexOf('\r\n', at);
        if (lineEnd < 0) return undefined;
        const size = parseInt(buffer.subarray(at, lineEnd).toString('latin1'), 16);
        if (buffer.length < lineEnd + 2 + size + 2) return undefined;
        if (size === 0) {
          buffer = buffer.subarray(lineEnd + 4);
          return { status, headers, body: Buffer.concat(chunks).toString('utf8') };
        }
        chunks.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const length = status === 204 || status === 304 ? 0 : Number(headers['content-length'] ?? 0);
    if (buffer.length < end + 4 + length) return undefined;
    const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    buffer = buffer.subarray(end + 4 + length);
    return { status, headers, body };
  };

  return {
    send: (data) => void socket.write(data),
    end: (data) => void (data === undefined ? socket.end() : socket.end(data)),
    get reset() {
      return reset;
    },
    closed,
    destroy: () => void socket.destroy(),
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const response = take();
        if (response) return response;
        if (ended) return 'closed';
        if (Date.now() > deadline)
          throw new Error(`no answer in ${timeoutMs} ms; received so far: ${buffer.toString('latin1').slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    },
  };
}

/** A request as bytes: the request line, `Host`, the given header lines, a blank line, the body. */
export function rawRequest(url: string, requestLine: string, headerLines: string[] = [], body = ''): string {
  return `${requestLine}\r\nHost: ${new URL(url).host}\r\n${headerLines.map((line) => `${line}\r\n`).join('')}\r\n${body}`;
}
