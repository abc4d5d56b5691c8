import { readdirSync } from 'node:fs';
import path from 'node:path';
import { DurableJsonFile } from '../../lib/durable-file.js';
import { corruptFile } from './errors.js';
import { readJsonSync } from './read-json.js';
import type { StoreFileSystem } from './io.js';

/** One record's new state in a journal entry: `record` absent deletes it. */
export interface JournalChange {
  collection: string;
  tenant_id: string;
  id: string;
  record?: unknown;
}

/** A journal file: every change of one write, saved before any shard file is touched. */
export interface JournalEntry {
  version: 1;
  seq: number;
  changes: JournalChange[];
}

const ENTRY_NAME = /^(\d{8,})\.json$/;

/**
 * The write-ahead journal: a folder of numbered files, one per write that touches more than one
 * file. Each is written whole (temp file + rename) and durably before the shard files it names,
 * so a write is saved once its journal file is: a crash while the shards are written leaves the
 * journal, and the next open applies it again (every change states a record's whole new value,
 * so applying one twice is harmless). Files are removed oldest first, once their shards are on disk.
 */
export class Journal {
  private next = 1;

  constructor(
    readonly dir: string,
    private readonly fs: StoreFileSystem,
  ) {}

  /** The entries a stopped process left, oldest first; a damaged one stops the open, named. */
  async pending(): Promise<{ file: string; entry: JournalEntry }[]> {
    const files = readdirSync(this.dir)
      .map((name) => ENTRY_NAME.exec(name))
      .filter((match) => match !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map((match) => path.join(this.dir, match[0]));
    const entries: { file: string; entry: JournalEntry }[] = [];
    for (const file of files) {
      const entry = readJsonSync(file) as JournalEntry | null;
      if (entry?.version !== 1 || !Array.isArray(entry.changes)) {
        throw corruptFile(file, 'expected a journal entry with a "changes" array');
      }
      entries.push({ file, entry });
      this.next = Math.max(this.next, entry.seq + 1);
    }
    return entries;
  }

  /** Saves an entry durably; resolves to its file. A failure leaves no entry behind. */
  async append(changes: JournalChange[]): Promise<string> {
    const seq = this.next++;
    const file = path.join(this.dir, `${String(seq).padStart(8, '0')}.json`);
    await new DurableJsonFile<JournalEntry>(file, this.fs).replace({ version: 1, seq, changes });
    try {
      await this.fs.syncDir(this.dir);
    } catch (error) {
      // Renamed but maybe not durable: the write is reported as failed, so no entry may stay to replay it.
      await this.fs.unlink(file).catch(() => {});
      throw error;
    }
    return file;
  }

  /** Removes entries whose changes are all in the shard files, durably, oldest first. */
  async remove(files: string[]): Promise<void> {
    if (files.length === 0) return;
    for (const file of files) {
      await this.fs.unlink(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
    await this.fs.syncDir(this.dir);
  }
}
