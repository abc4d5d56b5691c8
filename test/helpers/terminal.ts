import { EventEmitter } from 'node:events';

/**
 * A terminal for ink without a pty: stdout records every write (as a TTY of a given size), stdin
 * delivers keys the way ink reads them ('readable', then read()). A TTY is the one thing the tests
 * cannot open locally, hence this stand-in; `tty: false` is a pipe, where raw mode is unsupported.
 */
export class FakeStdout extends EventEmitter {
  readonly isTTY = true;
  columns = 100;
  rows = 30;
  output = '';
  write = (chunk: string, callback?: () => void): boolean => {
    this.output += chunk;
    callback?.();
    return true;
  };
}

export class FakeStdin extends EventEmitter {
  readonly isTTY: boolean;
  rawMode = false;
  private pending: string[] = [];
  constructor(options: { tty: boolean }) {
    super();
    this.isTTY = options.tty;
  }
  /** Types `keys` (one chunk, as a terminal sends a key press). */
  press(keys: string): void {
    this.pending.push(keys);
    this.emit('readable');
  }
  read = (): string | null => this.pending.shift() ?? null;
  setRawMode(on: boolean): this {
    if (!this.isTTY) throw new Error('setRawMode on a stdin that is not a TTY');
    this.rawMode = on;
    return this;
  }
  setEncoding(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
}

/** Strips SGR colours and the cursor moves ink draws with, to assert on the text a user sees. */
export function plain(text: string): string {
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
}
