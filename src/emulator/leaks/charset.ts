/**
 * A body as the text it is (pure): decoded by the charset its Content-Type declares (UTF-16, Latin-1,
 * Shift_JIS: whatever the WHATWG Encoding Standard names), or by its byte order mark, UTF-8 when
 * neither says: a value written in UTF-16 is found as one written in UTF-8 is.
 */
import { TextDecoder } from 'node:util';

type Headers = Record<string, string | string[] | number | undefined>;

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;

/** A decoder of the charset `headers` declare (a BOM, when a body begins with one, wins). */
export function decoderFor(headers: Headers | undefined, head?: Uint8Array): TextDecoder {
  const bom = head ? byteOrderMark(head) : undefined;
  const label = bom ?? declaredCharset(headers);
  if (label !== undefined) {
    try {
      return new TextDecoder(label);
    } catch {
      // A charset no decoder knows: read as UTF-8, as an undeclared one is.
    }
  }
  return new TextDecoder('utf-8');
}

/** `body` as text, by decoderFor. */
export function decoded(body: Buffer | string, headers: Headers | undefined): string {
  if (typeof body === 'string') return body;
  // Most bodies declare no charset and begin with no mark: read as Buffer reads UTF-8, at once.
  if (byteOrderMark(body) === undefined && declaredCharset(headers) === undefined) return body.toString();
  return decoderFor(headers, body).decode(body);
}

function declaredCharset(headers: Headers | undefined): string | undefined {
  if (!headers) return undefined;
  let type = headers['content-type'];
  if (type === undefined) {
    for (const name in headers) if (name.toLowerCase() === 'content-type') type = headers[name];
  }
  const text = Array.isArray(type) ? type[0] : type;
  return typeof text === 'string' ? CHARSET.exec(text)?.[1]?.toLowerCase() : undefined;
}

function byteOrderMark(head: Uint8Array): string | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}
