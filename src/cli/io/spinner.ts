import type { Writable } from './process.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** A call answered sooner than this shows nothing: a spinner that flashes is noise. */
export const SPINNER_DELAY_MS = 300;
const FRAME_MS = 80;
/** Back to the start of the line, and erase it. */
const ERASE_LINE = '\r\u001b[2K';

/**
 * A spinner on one line of a terminal (stderr) while calls are under way, shown only once one has taken
 * longer than SPINNER_DELAY_MS: what it waits for (the outermost call still open, so that a command's
 * own words, `reactor charge (POST 127.0.0.1:8790)`, win over the requests made under them) and for how
 * long. Its line is erased when the last call ends and before anything else is written (`clear`), so it
 * never mixes with the output, and when the process exits (Ctrl-C exits at once where no command
 * listens for it). Its timers never keep the process alive.
 */
export class Spinner {
  /** The calls under way, the outermost first. */
  private readonly labels: { label: string }[] = [];
  private frame = 0;
  private since = 0;
  private delay: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private shown = false;
  private readonly eraseOnExit = () => this.clear();

  constructor(
    private readonly stream: Writable,
    private readonly now: () => number = Date.now,
  ) {}

  /** A call begins (`label`: what it waits for, `POST 127.0.0.1:8790`); the returned function ends it. */
  start(label: string): () => void {
    const entry = { label };
    this.labels.push(entry);
    if (this.labels.length === 1) {
      this.since = this.now();
      this.delay = setTimeout(() => {
        this.ticker = setInterval(() => this.draw(), FRAME_MS).unref();
        this.draw();
      }, SPINNER_DELAY_MS).unref();
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.labels.splice(this.labels.indexOf(entry), 1);
      if (this.labels.length > 0) return;
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
    process.off('exit', this.eraseOnExit);
    this.stream.write(ERASE_LINE);
  }

  /** The line as drawn now: `⠋ Waiting for reactor charge (POST 127.0.0.1:8790)… 3s`. */
  text(): string {
    const seconds = Math.floor((this.now() - this.since) / 1000);
    return `${FRAMES[this.frame % FRAMES.length]} Waiting for ${this.labels[0]?.label ?? ''}… ${seconds}s`;
  }

  private draw(): void {
    const text = this.text();
    this.frame++;
    // A terminal of unknown size (0 columns) is taken as 80 wide.
    const width = Math.max((this.stream.columns || 80) - 1, 10);
    this.stream.write(`${ERASE_LINE}${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    if (!this.shown) process.once('exit', this.eraseOnExit);
    this.shown = true;
  }
}
