import type { Writable } from './process.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** A call answered sooner than this shows nothing: a spinner that flashes is noise. */
export const SPINNER_DELAY_MS = 300;
const FRAME_MS = 80;
/** Back to the start of the line, and erase it. */
const ERASE_LINE = '\r\u001b[2K';

/**
 * A spinner on one line of a terminal (stderr) while calls are under way, shown only once one has taken
 * longer than SPINNER_DELAY_MS. Its line is erased when the last call ends and before anything else is
 * written (`clear`), so it never mixes with the output. Its timers never keep the process alive.
 */
export class Spinner {
  private calls = 0;
  private label = '';
  private frame = 0;
  private delay: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private shown = false;

  constructor(private readonly stream: Writable) {}

  /** A call begins (`label`: what it waits for, `POST 127.0.0.1:8790`); the returned function ends it. */
  start(label: string): () => void {
    this.calls++;
    this.label = label;
    if (this.calls === 1) {
      this.delay = setTimeout(() => {
        this.ticker = setInterval(() => this.draw(), FRAME_MS).unref();
        this.draw();
      }, SPINNER_DELAY_MS).unref();
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.calls > 0) return;
      clearTimeout(this.delay);
      clearInterval(this.ticker);
      this.delay = this.ticker = undefined;
      this.clear();
    };
  }

  /** Erases the spinner's line, if it shows (the next frame draws it again while calls are under way). */
  clear(): void {
    if (!this.shown) return;
    this.shown = false;
    this.stream.write(ERASE_LINE);
  }

  private draw(): void {
    const text = `${FRAMES[this.frame++ % FRAMES.length]} Waiting for the answer to ${this.label}…`;
    // A terminal of unknown size (0 columns) is taken as 80 wide.
    const width = Math.max((this.stream.columns || 80) - 1, 10);
    this.stream.write(`${ERASE_LINE}${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    this.shown = true;
  }
}
