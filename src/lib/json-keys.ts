/**
 * How many distinct object keys a JSON text may hold: V8 makes each distinct key a string and a
 * shape of its own, so parsing 5 MB of 416,000 distinct keys (in objects of 100) takes over a
 * second, where the same bytes of repeated keys or of array items take 30 to 60 ms. A body is
 * counted before it is parsed.
 */
export const MAX_JSON_KEYS = 20_000;

/**
 * Whether JSON `text` holds more than `max` distinct object keys (the string before a `:` outside
 * strings, as written), counted without parsing and no further than past `max`. Text too short to
 * hold that many is not read. Text that is not JSON may count wrong; the parser then says so.
 */
export function exceedsKeys(text: string, max = MAX_JSON_KEYS): boolean {
  // `"a":0,` at the least: shorter texts cannot hold more than `max` keys.
  if (text.length < max * 4) return false;
  const keys = new Set<string>();
  let inString = false;
  let start = 0;
  let end = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) {
        inString = false;
        end = i;
      }
    } else if (c === 0x22) {
      inString = true;
      start = i + 1;
    } else if (c === 0x3a) {
      keys.add(text.slice(start, end));
      if (keys.size > max) return true;
    }
  }
  return false;
}
