/**
 * Text someone else chose (a name, a path, console output, an error, a server's answer), made safe to
 * write to a terminal. A terminal acts on some characters instead of showing them: ESC starts
 * sequences that move the cursor, clear the screen, set the window title or write hyperlinks (OSC 8);
 * BEL rings; CR returns to column 0 and overwrites what the line said; a newline starts a line that
 * can pass for one of svc's own; U+2028/U+2029 break lines in some terminals and editors; the
 * bidirectional controls (U+202A-202E, U+2066-2069, U+200E/200F, U+061C) reorder what is shown, so
 * that a name reads as another. Each of them is shown as an escape instead (`\u001b`, `\u202e`; `\n`,
 * `\r`, `\t`), in the notation of JSON and JavaScript: escaping a JSON text keeps it the same JSON.
 *
 * Every output path for people goes through here: the serve log, the dashboard, `svc logs`, tables,
 * errors, plans. `--json` output does not (JSON escapes what it must, and stays exact).
 */

/** C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional controls. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');
/** The same less the tab, which only moves the cursor right: kept in text shown as lines (code, console output). */
const UNSAFE_IN_LINES = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` as one line a terminal shows as it is: every character it would act on (newlines and tabs
 * included) written as an escape. Idempotent: what it returns has nothing left to escape.
 */
export function safeText(text: string): string {
  // Most text has nothing to escape: one test, and the string itself back.
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escape) : text;
}

/**
 * Text that is lines on purpose (console output, a stack, code, a multi-line error), made safe line
 * by line: each line as `safeText` makes it (tabs kept), every line after the first starting with
 * `indent`, so that none starts at column 0 where it could pass for a line of svc's own. `\r\n` ends a
 * line as `\n` does; a CR elsewhere, U+2028 and U+2029 are escaped, not taken as line ends.
 */
export function safeLines(text: string, indent = ''): string {
  if (!UNSAFE.test(text)) return text;
  return text
    .split(/\r?\n/)
    .map((line) => line.replace(UNSAFE_IN_LINES, escape))
    .join(`\n${indent}`);
}
