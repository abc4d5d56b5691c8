/**
 * Header names and media types of the API (DESIGN.md section 2), in one place for the emulator,
 * the client and the CLI. Names are lower-case, as Node hands them over; HTTP compares them
 * without regard to case.
 */

/** The API key of an Application (auth). */
export const API_KEY_HEADER = 'svc-api-key';
/** Names the proxy of a proxy invocation (or the query parameter of the same name). */
export const PROXY_KEY_HEADER = 'svc-proxy-key';
export const PROXY_KEY_QUERY = 'svc-proxy-key';
/** The destination's status on every answer it gave through a proxy. */
export const PROXY_DESTINATION_STATUS_HEADER = 'svc-proxy-destination-status';
/** Enterprise: Keep-Alive and Connection for the hop to the destination. */
export const PROXY_KEEP_ALIVE_HEADER = 'svc-proxy-keep-alive';
export const PROXY_CONNECTION_HEADER = 'svc-proxy-connection';
/**
 * Set on every call a proxy forwards. The emulator refuses it on its own admin routes and on
 * `/proxy` itself: a proxy pointed at the emulator can neither borrow its loopback trust nor loop.
 */
export const PROXY_HOP_HEADER = 'svc-proxy-hop';
/** Token writes carrying it are staged in that open transaction (Enterprise). */
export const TRANSACTION_HEADER = 'svc-transaction-id';
export const IDEMPOTENCY_KEY_HEADER = 'svc-idempotency-key';
/** Echoed on every answer; generated when the caller sent none. */
export const TRACE_HEADER = 'svc-trace-id';
/** `t=<unix>,v1=<hex hmac-sha256 of "t.body">` on every webhook. */
export const SIGNATURE_HEADER = 'svc-signature';
/** The same on every attempt of one webhook event, so that receivers can drop repeats. */
export const WEBHOOK_ID_HEADER = 'svc-webhook-id';
/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1, with the older Keep-Alive and Proxy-Connection): they
 * describe one connection, not the message, so nothing passes them on, lets user code set them or records them.
 */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
];

export const JSON_CONTENT_TYPE = 'application/json';
/** What an answer of JSON is sent as. */
export const JSON_UTF8_CONTENT_TYPE = 'application/json; charset=utf-8';
/** PATCH bodies: RFC 7386 merge patches. */
export const MERGE_PATCH_CONTENT_TYPE = 'application/merge-patch+json';
/** Errors: RFC 9457 problem details. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
