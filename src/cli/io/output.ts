import { safeLines, safeText } from '../../lib/terminal-text.js';
import type { IO } from './process.js';
import { Spinner } from './spinner.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

export interface OutputOptions {
  json: boolean;
  color: boolean;
}

/**
 * Everything the CLI prints goes through here: results on stdout (one JSON document with --json),
 * everything else on stderr. Human tables use ink on a colour terminal, plain lines otherwise.
 * Human text is made safe for a terminal on its way out (lib/terminal-text.ts): the names, paths and
 * errors in it are a tenant's or a server's, and none may draw on the terminal. JSON goes out exact.
 */
export class Output {
  /** Only for a person at a terminal: never with --json, never into a pipe or a file. */
  private readonly spinner: Spinner | undefined;

  constructor(
    private readonly io: IO,
    readonly options: OutputOptions,
  ) {
    const terminal = io.stderr.isTTY === true && io.env.TERM !== 'dumb';
    this.spinner = terminal && !options.json ? new Spinner(io.stderr) : undefined;
  }

  get json(): boolean {
    return this.options.json;
  }

  /** A call begins that may take a while (a spinner shows if it does); the returned function ends it. */
  busy(label: string): () => void {
    return this.spinner?.start(safeText(label)) ?? (() => {});
  }

  /** Prints a result: as JSON with --json, else as `human` prints it. */
  async result(value: unknown, human: () => void | Promise<void>): Promise<void> {
    this.spinner?.clear();
    if (this.options.json) this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else await human();
  }

  /**
   * A line of the result (stdout): with --json the document, exact; otherwise human text, its lines
   * and tabs kept (code, JSON shown to a person) and every other control character shown escaped.
   */
  line(text = ''): void {
    this.spinner?.clear();
    this.io.stdout.write(`${this.options.json ? text : safeLines(text)}\n`);
  }

  /**
   * A line the CLI painted itself (ANSI colours), whose chosen parts the painter already made safe
   * (ui/render-plan.ts): written as it is, as `line` would escape the colours.
   */
  painted(text: string): void {
    this.spinner?.clear();
    this.io.stdout.write(`${text}\n`);
  }

  /** Anything that is not the result: notes, progress, warnings (stderr), made safe as `line` makes them. */
  note(text: string): void {
    this.spinner?.clear();
    this.io.stderr.write(`${safeLines(text)}\n`);
  }

  async table<T>(rows: T[], columns: Column<T>[], empty = 'Nothing to show.'): Promise<void> {
    if (rows.length === 0) return this.note(empty);
    this.spinner?.clear();
    // A cell is one line: a name holding a newline must not start a row of its own.
    const cells = rows.map((row) => columns.map((column) => safeText(column.value(row))));
    const headers = columns.map((column) => column.header);
    if (this.fancy) {
      const { renderTable } = await import('../../ui/render-table.js');
      this.io.stdout.write(`${renderTable(headers, cells, this.io.stdout.columns)}\n`);
    } else {
      this.io.stdout.write(plainTable(headers, cells));
    }
  }

  /** Label/value pairs of one resource, aligned. */
  async fields(given: [label: string, value: string][]): Promise<void> {
    this.spinner?.clear();
    // A value may be lines on purpose (rules): each is made safe, and shown indented under the value.
    const pairs = given.map(([label, value]): [string, string] => [safeText(label), safeLines(value)]);
    if (this.fancy) {
      const { renderFields } = await import('../../ui/render-table.js');
      this.io.stdout.write(`${renderFields(pairs, this.io.stdout.columns)}\n`);
    } else {
      const width = Math.max(...pairs.map(([label]) => label.length));
      const indent = `\n${' '.repeat(width + 2)}`;
      for (const [label, value] of pairs)
        this.io.stdout.write(`${label.padEnd(width)}  ${value.replaceAll('\n', indent)}\n`);
    }
  }

  private get fancy(): boolean {
    return this.io.stdout.isTTY === true && this.options.color;
  }
}

/** Columns padded to their widest cell; the last column is not padded. */
export function plainTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const format = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [format(headers), ...rows.map(format)].map((line) => `${line}\n`).join('');
}
