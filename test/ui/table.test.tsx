import { beforeEach, describe, expect, test, vi } from 'vitest';
import { plainTable } from '../../src/cli/io/output.js';
import { fitColumns } from '../../src/ui/fit-columns.js';
import { renderFields, renderTable } from '../../src/ui/render-table.js';
import { runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';

// The real ink renderers, watched, to tell which path the CLI's Output took.
vi.mock(import('../../src/ui/render-table.js'), async (importOriginal) => {
  const original = await importOriginal();
  return { ...original, renderTable: vi.fn(original.renderTable), renderFields: vi.fn(original.renderFields) };
});

beforeEach(() => {
  vi.mocked(renderTable).mockClear();
  vi.mocked(renderFields).mockClear();
});

const HEADERS = ['ID', 'NAME', 'TYPE'];
const ROWS = [
  ['1', 'alpha', 'private'],
  ['22', 'b', 'management'],
  ['333333', 'a longer name', 'public'],
];

/** Asserts every cell starts where its header starts, with at least two spaces before it. */
function expectAligned(text: string, headers: string[], rows: string[][]): void {
  const lines = text.replace(/\n$/, '').split('\n');
  expect(lines).toHaveLength(rows.length + 1);
  const header = lines[0]!;
  const starts = headers.map((name) => header.indexOf(name));
  expect(starts.every((start, i) => i === 0 || start > starts[i - 1]!)).toBe(true);
  rows.forEach((row, r) => {
    const line = lines[r + 1]!;
    row.forEach((cell, c) => {
      const start = starts[c]!;
      expect(line.slice(start, start + cell.length)).toBe(cell);
      if (c > 0) expect(line.slice(start - 2, start)).toBe('  ');
    });
  });
}

describe('renderTable (ink)', () => {
  test('prints the headers and the cells aligned in columns', () => {
    const text = renderTable(HEADERS, ROWS);
    expectAligned(text, HEADERS, ROWS);
    // Each column is as wide as its widest cell plus a gap of two.
    const header = text.split('\n')[0]!;
    expect(header.indexOf('NAME')).toBe('333333'.length + 2);
    expect(header.indexOf('TYPE')).toBe('333333'.length + 2 + 'a longer name'.length + 2);
  });

  test('a table with no rows is just the headers', () => {
    expect(renderTable(['A', 'BB'], []).trimEnd()).toMatch(/^A\s+BB$/);
  });

  test('a long cell in a descriptive column wraps within the terminal width, whole', () => {
    const text = renderTable(['ID', 'NOTE'], [['1', 'x'.repeat(100)]], 40);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(text.replace(/[\s]/g, '')).toContain(`1${'x'.repeat(100)}`);
  });

  test('at 80 columns ids, names and types stay whole; data and timestamps narrow and wrap', () => {
    const id = 'a3f1c0de-1111-4e4e-9a9a-0123456789ab';
    const row = [
      id,
      'card',
      '/pci/high/',
      '{"number":"4242424242424242","expiration_month":12}',
      '2026-11-24T10:00:00.000Z',
    ];
    const text = renderTable(['ID', 'TYPE', 'CONTAINERS', 'DATA', 'CREATED'], [row], 80);
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[1]).toContain(`${id}  card  /pci/high/  `);
    expect(lines[0]).toMatch(/^ID {36}TYPE {2}CONTAINERS {2}DATA +CREATED$/);
    // All of the data is still there, wrapped (no ellipsis).
    expect(text).not.toContain('…');
    const start = lines[0]!.indexOf('DATA');
    const end = lines[0]!.indexOf('CREATED');
    const data = lines
      .slice(1)
      .map((line) => line.slice(start, end).trim())
      .join('');
    expect(data).toBe(row[3]);
  });

  test('a table too wide even narrowed shows each row as a record, nothing cut', () => {
    const id = 'a3f1c0de-1111-4e4e-9a9a-0123456789ab';
    const headers = ['ID', 'NAME', 'TYPE', 'PERMISSIONS', 'RULES', 'EXPIRES'];
    const rows = [
      [id, 'payments-backend', 'management', 'application:*, reactor:*', '0', '-'],
      ['b'.repeat(36), 'other', 'private', 'token:read', '2', '2026-11-24T10:00:00.000Z'],
    ];
    const text = renderTable(headers, rows, 80);
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    expect(text).toMatch(new RegExp(`^id +${id}$`, 'm'));
    expect(text).toMatch(/^permissions +application:\*, reactor:\*$/m);
    expect(text).toMatch(/^expires +2026-11-24T10:00:00.000Z$/m);
    // A blank line between records.
    expect(text).toMatch(/^expires +-\n\nid +b{36}$/m);
  });
});

describe('fitColumns', () => {
  test('a table that fits keeps every column at its widest cell', () => {
    expect(fitColumns(['ID', 'NOTE'], [['12', 'a note']], 80)).toEqual({ widths: [2, 6], fits: true });
  });

  test('word-wrapping columns narrow first, down to their longest word', () => {
    // 4 + 2 + 30 + 2 + 20 = 58 > 50: the permissions column (words) gives up 8, the timestamp none.
    const widths = fitColumns(
      ['ID', 'PERMISSIONS', 'CREATED'],
      [['1234', 'token:read token:create token:x', 'x'.repeat(20)]],
      50,
    );
    expect(widths).toEqual({ widths: [4, 22, 20], fits: true });
  });

  test('ID, NAME and TYPE never narrow; a row that cannot fit says so', () => {
    const { widths, fits } = fitColumns(
      ['ID', 'NAME', 'TYPE', 'DATA'],
      [['i'.repeat(40), 'n'.repeat(30), 'management', 'd'.repeat(40)]],
      60,
    );
    expect(widths).toEqual([40, 30, 10, 8]);
    expect(fits).toBe(false);
  });
});

describe('renderFields (ink)', () => {
  test('aligns the values after the widest label, continuation lines included', () => {
    const text = renderFields([
      ['id', '42'],
      ['permissions', 'token:read, token:create'],
      ['rules', '1: /pci/ mask\n2: /ssn/ redact'],
    ]);
    const lines = text.split('\n');
    const at = 'permissions'.length + 2;
    expect(lines).toEqual([
      `${'id'.padEnd(at)}42`,
      `${'permissions'.padEnd(at)}token:read, token:create`,
      `${'rules'.padEnd(at)}1: /pci/ mask`,
      `${''.padEnd(at)}2: /ssn/ redact`,
    ]);
  });
});

describe('plainTable', () => {
  test('pads every column but the last to its widest cell, two spaces apart', () => {
    const text = plainTable(HEADERS, ROWS);
    expect(text).toBe(
      [
        'ID      NAME           TYPE',
        '1       alpha          private',
        '22      b              management',
        '333333  a longer name  public',
        '',
      ].join('\n'),
    );
    expectAligned(text, HEADERS, ROWS);
  });

  test('no trailing spaces, even when the last cells are empty', () => {
    const text = plainTable(
      ['A', 'B'],
      [
        ['x', ''],
        ['yyyy', 'z'],
      ],
    );
    expect(text).toBe('A     B\nx\nyyyy  z\n');
  });

  test('a header wider than its cells sets the width', () => {
    expect(plainTable(['LONGHEADER', 'X'], [['a', 'b']])).toBe('LONGHEADER  X\na           b\n');
  });
});

describe('Output in a terminal', () => {
  test('a list on a TTY is rendered through ink and still holds the names', async () => {
    const emu = await startEmulator();
    const result = await runSvc(
      ['applications', 'list', '--base-url', emu.url, '--management-key', emu.managementKey],
      { cwd: emu.dir, tty: true },
    );
    expect(result.code).toBe(0);
    expect(vi.mocked(renderTable)).toHaveBeenCalledTimes(1);
    const [headers, rows, columns] = vi.mocked(renderTable).mock.calls[0]!;
    expect(headers).toEqual(['ID', 'NAME', 'TYPE', 'PERMISSIONS', 'RULES', 'EXPIRES']);
    expect(rows.map((row) => row[1]).sort()).toEqual(['svc management', 'svc private']);
    expect(columns).toBe(120);
    expect(result.stdout).toMatch(/^ID\s+NAME\s+TYPE/);
    expect(result.stdout).toContain('svc management');
    expect(result.stdout).toContain('svc private');
  });

  test('--no-color and NO_COLOR keep plain lines on a TTY; so does a non-TTY', async () => {
    const emu = await startEmulator();
    const base = ['profiles', 'list'];
    await runSvc(['profiles', 'add', 'p', '--base-url', emu.url], { cwd: emu.dir });
    const runs = [
      await runSvc([...base, '--no-color'], { cwd: emu.dir, tty: true }),
      await runSvc(base, { cwd: emu.dir, tty: true, env: { NO_COLOR: '1' } }),
      await runSvc(base, { cwd: emu.dir, tty: false }),
    ];
    for (const result of runs) {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(
        plainTable(['', 'NAME', 'BASE URL', 'MANAGEMENT KEY', 'API KEY'], [['', 'p', emu.url, '-', '-']]),
      );
    }
    expect(vi.mocked(renderTable)).not.toHaveBeenCalled();
    const fancy = await runSvc(base, { cwd: emu.dir, tty: true });
    expect(fancy.stdout).toContain(emu.url);
    expect(vi.mocked(renderTable)).toHaveBeenCalledTimes(1);
  });

  test('one Application on a TTY goes through ink Fields: rule lines stay in the value column', async () => {
    const emu = await startEmulator();
    const rules = [
      { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] },
      { priority: 2, container: '/ssn/', transform: 'redact', permissions: ['token:read'] },
    ];
    const created = await emu.call('POST', '/applications', { body: { name: 'ruled', type: 'private', rules } });
    expect(created.status).toBe(201);
    const result = await runSvc(['applications', 'get', 'ruled'], { cwd: emu.dir, tty: true });
    expect(result.code).toBe(0);
    expect(vi.mocked(renderFields)).toHaveBeenCalledTimes(1);
    const lines = result.stdout.split('\n');
    const first = lines.findIndex((line) => line.startsWith('rules'));
    const at = 'permissions'.length + 2;
    expect(lines[first]).toBe(`${'rules'.padEnd(at)}1: /pci/ mask [token:read]`);
    expect(lines[first + 1]).toBe(`${''.padEnd(at)}2: /ssn/ redact [token:read]`);
  });
});
