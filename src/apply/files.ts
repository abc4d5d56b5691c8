import { UnreadableFileError } from '../requests/errors.js';
import { readRegularFile } from '../requests/files.js';

/** How large a file of svc's own (.svc/state.json, keys.json, a saved plan) may be. */
const OWN_FILE_LIMIT = 64 * 1024 * 1024;

/**
 * A JSON file's value, or undefined when there is no file; damage throws `damaged(reason)`. Read as
 * any file svc reads is (requests/files.ts): a regular file of a bounded size, so that a FIFO or a
 * device put in its place is refused rather than hang or fill the apply, and never echoed back.
 */
export async function readJsonFile(file: string, damaged: (reason: string) => Error): Promise<unknown> {
  let text: string;
  try {
    text = await readRegularFile(file, 'svc', { maxBytes: OWN_FILE_LIMIT });
  } catch (error) {
    const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
    if (cause?.code === 'ENOENT') return undefined;
    throw damaged(error instanceof UnreadableFileError ? error.reason : (error as Error).message);
  }
  try {
    return JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which is not always svc's own (a file put there).
    throw damaged('it is not valid JSON');
  }
}
