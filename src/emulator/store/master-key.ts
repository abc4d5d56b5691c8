import { randomBytes } from 'node:crypto';
import { chmod, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { MASTER_KEY_FILE } from '../../api/defaults.js';
import { FILE_MODE } from '../../lib/durable-file.js';
import { EmulatorError } from '../errors.js';
import { cannotWrite } from './errors.js';
import { describeCause } from './io.js';

/**
 * The master key: `options.masterKey` (base64, 32 bytes) when given; else `master.key` (0600) beside
 * the data file, created on first start; in memory, a fresh random key. A key file others may read
 * is made owner-only, and `notice` says so (the emulator logs it as a warning).
 */
export async function loadMasterKey(
  dir: string | undefined,
  fromEnv: string | undefined,
): Promise<{ key: Buffer; created: boolean; notice?: string }> {
  if (fromEnv !== undefined) {
    const key = Buffer.from(fromEnv, 'base64');
    if (key.length !== 32)
      throw new EmulatorError(
        (name) => `${name('masterKey')} must be the base64 of exactly 32 bytes (e.g. \`openssl rand -base64 32\`).`,
        { option: 'masterKey' },
      );
    return { key, created: false };
  }
  if (dir === undefined) return { key: randomBytes(32), created: true };
  const file = path.join(dir, MASTER_KEY_FILE);
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32)
      throw new EmulatorError(
        `${file} does not hold a base64 32-byte key; restore it from a backup (tokens cannot be read without it).`,
      );
    const notice = await ownerOnly(file);
    return { key, created: false, ...(notice !== undefined && { notice }) };
  } catch (error) {
    if (error instanceof EmulatorError) throw error;
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new EmulatorError(`Cannot read ${file}: ${describeCause(error)}.`);
  }
  const key = randomBytes(32);
  try {
    // 'wx': never overwrite a key that appeared meanwhile; losing it would lose every token.
    const handle = await open(file, 'wx', FILE_MODE);
    try {
      await handle.writeFile(key.toString('base64'));
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    // A key file cut short (a full disk) must not be taken for the key at the next start.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await unlink(file).catch(() => {});
    throw cannotWrite(file, error);
  }
  return { key, created: true };
}

/**
 * Makes a key file that group or others may read owner-only (0600), as ssh refuses a private key
 * others can read; returns what it found and did, or undefined when the file was owner-only already.
 * Whoever could read the key can unseal every token, so the notice says so rather than fixing quietly.
 */
async function ownerOnly(file: string): Promise<string | undefined> {
  if (process.platform === 'win32') return undefined;
  const mode = (await stat(file)).mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  const was = `mode ${mode.toString(8).padStart(4, '0')}`;
  try {
    await chmod(file, FILE_MODE);
  } catch (error) {
    return (
      `${file} can be read by other users (${was}) and svc could not make it owner-only: ${describeCause(error)}. ` +
      `Anyone who can read it can read every token: run \`chmod 600 ${file}\`.`
    );
  }
  return (
    `${file} could be read by other users (${was}); svc made it owner-only (0600). ` +
    'Anyone who read it meanwhile can read every token sealed with it.'
  );
}
