import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/** What a call through the emulator answered. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  /** The body parsed when it is JSON, else its text (undefined when empty). */
  body: unknown;
}

/**
 * One HTTP request with exactly the headers given (a proxy forwards them: fetch would add its own),
 * over a keep-alive agent shared by a test run, so that thousands of calls reuse their sockets.
 */
export function send(
  agent: Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Answer> {
  const sent = { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) };
  return new Promise<Answer>((resolve, reject) => {
    const call = request(url, { method, headers: sent, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const flat = flatHeaders(response.headers);
        resolve({ status: response.statusCode ?? 0, headers: flat, body: parsed(text, flat['content-type']) });
      });
    });
    call.on('error', reject);
    call.end(body);
  });
}

/** A keep-alive agent for a test run's calls. */
export function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 64 });
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function parsed(text: string, type: string | undefined): unknown {
  if (text === '') return undefined;
  if (type !== undefined && /^application\/([a-z.+-]+\+)?json\b/i.test(type)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
