import { readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import {
  shardIndex,
  shardRecords,
  type Collection,
  type ShardFile,
  type TenantRecord,
  type WriteFn,
  unservedLine,
} from './collection.js';
import { FILES_IN_FLIGHT, mapBounded } from './concurrency.js';
import { DurableJsonFile, ensureDir, syncDir } from '../../lib/durable-file.js';
import { readJsonSync } from './read-json.js';

/**
 * Moves a sharded collection's records from the shard files `from` (any count, missing files are
 * empty) into the layout `to`, where `to[i]` is the file of shard i of `to.length`, all in one folder.
 * The new files are written from the old ones alone: a file left by an earlier, interrupted run is
 * overwritten, or removed if its shard now holds nothing, never merged. Every write is durable, so
 * once this resolves the new files are a whole copy; the old files are the caller's to remove, and
 * only once the store records the new layout.
 */
export async function reshard(from: string[], to: string[]): Promise<void> {
  const byShard = await recordsByShard(from, to.length);
  const folder = path.dirname(to[0]!);
  await ensureDir(folder);
  const present = new Set(await existing(to));
  await mapBounded(to, FILES_IN_FLIGHT, async (file, shard) => {
    const records = byShard[shard]!;
    if (records.length > 0) await new DurableJsonFile<ShardFile<TenantRecord>>(file).write({ version: 1, records });
    else if (present.has(file)) await unlink(file);
  });
  // The writes synced the folder, but a removal after the last of them must reach the disk too.
  await syncDir(folder);
}

/**
 * Moves the records of another layout's shard files `from` (in the collection's folder) into a
 * loaded collection, in one write of the store's writer (all or nothing, through its journal),
 * then removes those files. A record the collection already holds is kept as it is: a crash part
 * way leaves old files the next open moves again, and they turn nothing back. Nothing is removed
 * before every record moved is saved. A record that cannot be served stays in its old file, which
 * is rewritten to hold only such records; returns one problem line for each.
 */
export async function adoptShards<T extends TenantRecord>(
  collection: Collection<T>,
  from: string[],
  write: WriteFn,
): Promise<string[]> {
  if (from.length === 0) return [];
  const contents = await mapBounded(from, FILES_IN_FLIGHT, async (file) =>
    shardRecords<unknown>(readJsonSync(file), file),
  );
  const problems: string[] = [];
  const usable: T[] = [];
  const kept = contents.map((records, i) =>
    records.filter((raw, n) => {
      const problem = collection.problemOf(raw);
      if (problem === undefined) usable.push(raw as T);
      else problems.push(unservedLine(from[i]!, n, raw, problem));
      return problem !== undefined;
    }),
  );
  // In creation order, as the collection lists its records.
  usable.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  await write((batch) => {
    for (const record of usable) if (!batch.get(collection, record.tenant_id, record.id)) batch.put(collection, record);
  });
  await mapBounded(from, FILES_IN_FLIGHT, async (file, i) => {
    const left = kept[i]!;
    if (left.length === 0) await removeFiles([file]);
    else if (left.length < contents[i]!.length)
      await new DurableJsonFile<ShardFile<unknown>>(file).write({ version: 1, records: left });
  });
  await syncDir(path.dirname(from[0]!));
  return problems;
}

async function recordsByShard(files: string[], count: number): Promise<TenantRecord[][]> {
  const contents = await mapBounded(files, FILES_IN_FLIGHT, async (file) =>
    shardRecords<TenantRecord>(readJsonSync(file), file),
  );
  const byShard = Array.from({ length: count }, (): TenantRecord[] => []);
  for (const records of contents) {
    for (const record of records) byShard[shardIndex(record.tenant_id, record.id, count)]!.push(record);
  }
  return byShard;
}

/** Those of the files that exist. They lie in one folder, so one listing answers for all of them. */
export async function existing(files: string[]): Promise<string[]> {
  if (files.length === 0) return [];
  let names: Set<string>;
  try {
    names = new Set(await readdir(path.dirname(files[0]!)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return files.filter((file) => names.has(path.basename(file)));
}

export async function removeFiles(files: string[]): Promise<void> {
  await mapBounded(files, FILES_IN_FLIGHT, async (file) => {
    await unlink(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  });
}
