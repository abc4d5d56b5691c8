/** Where the local emulator listens and keeps its files by default: `svc serve` and the CLI that finds it agree here. */
import path from 'node:path';

export const DEFAULT_PORT = 8790;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_BASE_URL = `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;

/** The folder of `svc serve`'s files, relative to where it runs. */
export const STATE_DIR = '.svc';
export const DATA_FILE = 'data.json';
/** The data file when none is given: `.svc/data.json`. */
export const DEFAULT_DATA_PATH = path.join(STATE_DIR, DATA_FILE);
/** Beside the data file: the URL and the keys, for the CLI (0600). */
export const CREDENTIALS_FILE = 'credentials.json';
/** Beside the data file: the key that seals token data at rest (0600). */
export const MASTER_KEY_FILE = 'master.key';
