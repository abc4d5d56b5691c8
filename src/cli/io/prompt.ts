/**
 * Questions on the terminal (stderr), answered on stdin. Never without a TTY on both: a script gets a
 * usage error naming the flag instead (DESIGN.md section 5), never a prompt it cannot answer.
 */
import { safeLines } from '../../lib/terminal-text.js';
import { UserError } from './errors.js';
import type { IO } from './process.js';

/** Ctrl-C while a question waits in raw mode (no SIGINT then): exit 130, as the signal would. */
class InterruptedError extends UserError {
  override readonly exitCode = 130;
}

/** A terminal stdin that can go raw for hidden input. */
interface RawStdin {
  isTTY?: boolean;
  isRaw?: boolean;
  setRawMode(mode: boolean): unknown;
}

/** Whether a question can be asked: the user sees stderr and types into stdin. */
export function canPrompt(io: IO): boolean {
  return io.stdin.isTTY === true && io.stderr.isTTY === true;
}

/** Asks a yes/no question; only `y` or `yes` is yes (Enter alone, or end of input, is no). */
export async function askYesNo(io: IO, question: string): Promise<boolean> {
  const answer = await readLine(io, `${question} [y/N] `, false);
  return /^y(es)?$/i.test(answer.trim());
}

/** Asks for a word typed in full (`yes`): a stray `y` is not enough for what deletes several resources at once. */
export async function askWord(io: IO, question: string, word: string): Promise<boolean> {
  const answer = await readLine(io, question, false);
  return answer.trim().toLowerCase() === word;
}

/** Asks for a secret; what is typed is not echoed. Resolves to the trimmed answer ('' for Enter alone). */
export async function askHidden(io: IO, question: string): Promise<string> {
  const answer = await readLine(io, question, true);
  io.stderr.write('\n');
  return answer.trim();
}

/**
 * Asks `question`, then reads one line from stdin. Hidden input puts the terminal in raw mode (no echo)
 * before the question shows, so that nothing typed after it is echoed, and handles what the line
 * discipline would have: Enter, Backspace, Ctrl-C (stops the command, exit 130) and Ctrl-D.
 */
function readLine(io: IO, question: string, hidden: boolean): Promise<string> {
  const stdin = io.stdin;
  const raw = hidden && 'setRawMode' in stdin ? (stdin as unknown as RawStdin) : undefined;
  const wasRaw = raw?.isRaw === true;
  raw?.setRawMode(true);
  // A question names what it acts on (a reactor, an Application): made safe for the terminal.
  io.stderr.write(safeLines(question));
  return new Promise<string>((resolve, reject) => {
    let line = '';
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      raw?.setRawMode(wasRaw);
      stdin.pause();
      if (error) reject(error);
      else resolve(line);
    };
    const onEnd = () => finish();
    const onData = (chunk: Buffer | string) => {
      for (const char of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish();
        if (char === '\u0003') {
          io.stderr.write('\n');
          return finish(new InterruptedError('Cancelled.'));
        }
        if (char === '\u007f' || char === '\b') line = line.slice(0, -1);
        else line += char;
      }
    };
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}
