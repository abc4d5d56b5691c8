import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

export interface PlainResponse {
  status: number;
  /** The reason phrase of the status line (`OK`, `Not Found`). */
  statusText: string;
  httpVersion: string;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One HTTP request with exactly the headers given, and only those HTTP/1.1 needs besides (Host, Connection,
 * Content-Length). fetch adds its own (accept, accept-language, accept-encoding, sec-fetch-mode,
 * user-agent), which a proxy call forwards to its destination as if the user had sent them. node:http is
 * loaded on first use: most commands never call a proxy. Network failures reject with the errno error.
 */
export async function plainRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
  /** The request target to send (its path and query), instead of `url`'s, which has `..` resolved. */
  target?: string,
): Promise<PlainResponse> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const sent = { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) };
  return new Promise<PlainResponse>((resolve, reject) => {
    // A connection of its own, closed after the answer: a CLI makes one call and exits.
    const call = request(
      url,
      { method, headers: sent, agent: false, ...(target !== undefined && { path: target }) },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            statusText: response.statusMessage ?? '',
            httpVersion: response.httpVersion,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    call.on('error', reject);
    call.end(body);
  });
}
