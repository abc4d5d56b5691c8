import { describe, expect, test } from 'vitest';
import { safeLines, safeText } from '../../src/lib/terminal-text.js';

/** What a hostile name may hold: a cleared screen, a window title, a hyperlink, a bell, a CR, bidi and line separators. */
const CLEAR = '\u001b[2J\u001b[H';
const TITLE = '\u001b]0;pwned\u0007';
const LINK = '\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\';

describe('safeText', () => {
  test('leaves plain text as it is, Unicode included', () => {
    for (const text of ['charge', 'reactors.charge', '/tmp/a b/c.js', 'café ☕ 日本', ''])
      expect(safeText(text)).toBe(text);
  });

  test('escapes ESC sequences (cleared screen, window title, OSC 8 hyperlink), BEL and DEL', () => {
    expect(safeText(`a${CLEAR}b`)).toBe('a\\u001b[2J\\u001b[Hb');
    expect(safeText(TITLE)).toBe('\\u001b]0;pwned\\u0007');
    expect(safeText(LINK)).toBe('\\u001b]8;;https://evil.example\\u001b\\click\\u001b]8;;\\u001b\\');
    expect(safeText('x\u007fy')).toBe('x\\u007fy');
  });

  test('escapes C1 controls (CSI as one byte, NEL)', () => {
    expect(safeText('a\u009b2Jb\u0085c')).toBe('a\\u009b2Jb\\u0085c');
  });

  test('escapes newlines, CR and tab: one line, nothing at column 0', () => {
    expect(safeText('ok\r12:00:00 POST /admin 200\nnext\tcol')).toBe('ok\\r12:00:00 POST /admin 200\\nnext\\tcol');
  });

  test('escapes U+2028/U+2029 and every bidirectional control', () => {
    const bidi = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';
    expect(safeText(`a\u2028b\u2029c${bidi}`)).toBe(
      'a\\u2028b\\u2029c\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c',
    );
    expect(safeText('invoice\u202egpj.exe')).toBe('invoice\\u202egpj.exe');
  });

  test('is idempotent, and keeps a JSON text the same JSON', () => {
    const hostile = `${CLEAR}${TITLE}\u2028\u202e\u0085`;
    expect(safeText(safeText(hostile))).toBe(safeText(hostile));
    const json = JSON.stringify({ name: hostile });
    expect(JSON.parse(safeText(json))).toEqual({ name: hostile });
  });
});

describe('safeLines', () => {
  test('keeps the lines and tabs, makes each line safe, indents every line after the first', () => {
    expect(safeLines(`first\n\tsecond${CLEAR}\r\nthird`, '    ')).toBe(
      'first\n    \tsecond\\u001b[2J\\u001b[H\n    third',
    );
  });

  test('a CR alone, U+2028 and U+2029 are escaped, not taken as line ends', () => {
    expect(safeLines('a\rb\u2028c\u2029d', '  ')).toBe('a\\rb\\u2028c\\u2029d');
  });

  test('a forged log line never reaches column 0', () => {
    const shown = safeLines('done\n12:00:00 POST /applications 201 3ms', '    ');
    for (const line of shown.split('\n').slice(1)) expect(line.startsWith('    ')).toBe(true);
  });
});
