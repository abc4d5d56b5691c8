/**
 * A state file (api/state.ts's document) on disk: pretty JSON, its secrets sealed with a passphrase
 * (seal.ts) or, with --plaintext, in clear; written atomically (a failed write leaves the previous
 * file as it was); read, migrated to this svc's version and opened, or refused in one line.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  SECRET_FIELDS,
  STATE_KINDS,
  type StateDocument,
  StateFormatError,
  type StateKind,
  migrateState,
} from '../../../api/state.js';
import { type DurableFileSystem, DurableJsonFile, nodeFileSystem } from '../../../lib/durable-file.js';
import { UserError } from '../../io/errors.js';
import { askHidden, canPrompt } from '../../io/prompt.js';
import type { IO } from '../../io/process.js';
import { SealError, StateSeal } from './seal.js';

export const PASSPHRASE_ENV = 'SVC_STATE_PASSPHRASE';
/** A state file is read whole: more than this is no state file an emulator exported. */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

type AnyEntry = Record<string, unknown> & { id: string };

/** The document as a file holds it: every entry's secret fields sealed as its `sealed` field. */
export function sealedDocument(doc: StateDocument, seal: StateSeal | undefined): Record<string, unknown> {
  const file: Record<string, unknown> = {
    svc_state: doc.svc_state,
    ...(doc.svc_version !== undefined && { svc_version: doc.svc_version }),
    ...(doc.exported_at !== undefined && { exported_at: doc.exported_at }),
    ...(seal && { sealed: seal.header }),
  };
  for (const kind of STATE_KINDS)
    file[kind] = (doc[kind] as unknown as AnyEntry[]).map((entry) => (seal ? sealEntry(kind, entry, seal) : entry));
  return file;
}

function sealEntry(kind: StateKind, entry: AnyEntry, seal: StateSeal): AnyEntry {
  const fields: readonly string[] = SECRET_FIELDS[kind];
  if (fields.length === 0) return entry;
  const secret = Object.fromEntries(fields.filter((name) => name in entry).map((name) => [name, entry[name]]));
  const out: AnyEntry = { id: entry.id };
  for (const [name, value] of Object.entries(entry)) {
    if (!fields.includes(name)) out[name] = value;
    else if (!('sealed' in out)) out.sealed = seal.seal(secret, `${kind}:${entry.id}`);
  }
  return out;
}

/** A file's document, migrated and opened; `passphrase` is asked only for a sealed file. */
export async function openDocument(value: unknown, passphrase: () => Promise<string>): Promise<StateDocument> {
  const doc = migrateState(value);
  if (doc.sealed === undefined) return doc;
  let seal: StateSeal;
  try {
    seal = StateSeal.open(await passphrase(), doc.sealed);
  } catch (error) {
    if (error instanceof SealError) throw new StateFormatError(`cannot be opened: ${error.message}`);
    throw error;
  }
  const opened: Record<string, unknown> = { ...doc };
  delete opened.sealed;
  for (const kind of STATE_KINDS)
    opened[kind] = (doc[kind] as unknown as AnyEntry[]).map((entry) => openEntry(kind, entry, seal));
  return opened as unknown as StateDocument;
}

function openEntry(kind: StateKind, entry: AnyEntry, seal: StateSeal): AnyEntry {
  if (SECRET_FIELDS[kind].length === 0 || entry.sealed === undefined) return entry;
  let secret: unknown;
  try {
    secret = typeof entry.sealed === 'string' ? seal.open(entry.sealed, `${kind}:${String(entry.id)}`) : undefined;
  } catch {
    secret = undefined;
  }
  if (typeof secret !== 'object' || secret === null)
    throw new StateFormatError(
      `has ${kind.slice(0, -1)} ${String(entry.id)} whose seal does not open (damaged, or moved from another entry)`,
    );
  const out: AnyEntry = { id: entry.id };
  for (const [name, value] of Object.entries(entry)) {
    if (name === 'sealed') Object.assign(out, secret);
    else out[name] = value;
  }
  return out;
}

/** Writes `doc` to `file` atomically: the previous file stays whole until the new one is on disk. */
export async function writeStateFile(
  file: string,
  doc: Record<string, unknown>,
  fs: DurableFileSystem = nodeFileSystem,
): Promise<void> {
  try {
    await new DurableJsonFile(file, fs, 2).write(doc);
  } catch (error) {
    throw new UserError(`Cannot write ${file}${why(error)}; any previous file there is unchanged.`);
  }
}

const WHY: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a folder',
  ENOTDIR: 'a file is in the way of its folder',
  EACCES: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
};

/** Why a file could not be read or written, in words where the error code has some: `: no such file`. */
function why(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const words = code === undefined ? undefined : WHY[code];
  return words === undefined ? ` (${code ?? (error as Error).message})` : `: ${words}`;
}

/** A state file read and parsed, or one line saying why not. */
export async function readStateFile(file: string, cwd: string): Promise<unknown> {
  let text: string;
  try {
    const buffer = await readFile(path.resolve(cwd, file));
    if (buffer.length > MAX_FILE_BYTES) throw new UserError(`${file} is larger than a state file can be.`);
    text = buffer.toString('utf8');
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`Cannot read ${file}${why(error)}.`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file} is not valid JSON (${(error as Error).message}); nothing changed.`);
  }
}

/** The passphrase: SVC_STATE_PASSPHRASE, or asked (hidden) on a terminal; `purpose` says what for. */
export async function passphrase(io: IO, purpose: 'seal' | 'open'): Promise<string> {
  const given = io.env[PASSPHRASE_ENV];
  if (given !== undefined && given !== '') return given;
  if (!canPrompt(io))
    throw new UserError(
      purpose === 'seal'
        ? `Sealing the state's secrets needs a passphrase: set ${PASSPHRASE_ENV}, or give --plaintext to write them in clear.`
        : `This state file is sealed: set ${PASSPHRASE_ENV} to the passphrase it was exported with.`,
    );
  const typed = await askHidden(
    io,
    purpose === 'seal' ? 'Passphrase to seal the state with: ' : 'Passphrase of the state file: ',
  );
  if (typed === '') throw new UserError('An empty passphrase seals nothing; give one, or --plaintext.');
  return typed;
}
