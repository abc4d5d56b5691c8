import type { FastifyReply } from 'fastify';
import { JSON_UTF8_CONTENT_TYPE } from '../../api/headers.js';

/** What a text answer is sent as when nothing else set its type. */
export const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/**
 * A text body sent as bytes. Given a string, Node writes the header block in the body's encoding
 * (UTF-8), which would turn a Latin-1 header value into other bytes than the ones set.
 */
export function sendText(reply: FastifyReply, body: string, type = TEXT_CONTENT_TYPE): FastifyReply {
  if (!reply.hasHeader('content-type')) reply.type(type);
  return reply.send(Buffer.from(body));
}

/** Any JSON value as the body (fastify would send a bare string as text/plain). */
export function sendJson(reply: FastifyReply, value: unknown, status = 200): FastifyReply {
  return reply
    .status(status)
    .type(JSON_UTF8_CONTENT_TYPE)
    .send(JSON.stringify(value ?? null));
}
