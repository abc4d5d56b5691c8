/** Patterns of the API's identifiers, as regular expressions and as the JSON Schema strings built from them. */
import { MAX_TOKEN_ID_LENGTH } from './limits.js';

/** A UUID, any case (ids the API makes are lower-case; lookups accept either). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Custom token ids: a letter or digit, then letters, digits and `_ . : -`, 200 at most (unanchored source). */
export const TOKEN_ID_SOURCE = `[A-Za-z0-9][A-Za-z0-9_.:-]{0,${MAX_TOKEN_ID_LENGTH - 1}}`;
/** The same, anchored, as JSON Schema `pattern`. */
export const TOKEN_ID_PATTERN = `^${TOKEN_ID_SOURCE}$`;

/** What a custom token id breaks when it does not match, in words. */
export const TOKEN_ID_RULE = `must be 1-${MAX_TOKEN_ID_LENGTH} letters, digits or "_ . : -", starting with a letter or digit`;

/** What a key given to `svc serve` (or to the tenant admin route) must look like. */
export const GIVEN_KEY_PATTERN = /^[A-Za-z0-9_.-]{16,256}$/;

/** An http or https URL (the scheme in any case), as JSON Schema `pattern`. */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://';

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/** A card number declared to the leak guard (a test card): 13 to 19 digits, spaces or dashes between them. */
export const DECLARED_CARD_PATTERN = /^\d(?:[ -]?\d){12,18}$/;

/** A host declared to the leak guard: a name (or IP, optionally `:port`), or `*.` and a name (any host below it). */
export const DECLARED_HOST_PATTERN =
  /^(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?$/i;

/** A status or a class of them, as `svc logs --status` and `GET /_emulator/events?status=` take it: `5xx`, `404`. */
export const STATUS_FILTER_PATTERN = /^[1-5](?:xx|\d\d)$/i;
