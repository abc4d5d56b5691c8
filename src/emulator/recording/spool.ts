/**
 * Where a recording keeps its exchanges until their cassettes are written: a file of this run's
 * own, sealed with a key held only in memory (AES-256-GCM, a fresh IV per part), so that what it
 * holds is unreadable on the disk, and unlinked as soon as it is open (with its private folder), so
 * that a crash leaves nothing visible. Memory holds only where each part is (`Span`).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { type FileHandle, mkdtemp, open, rmdir, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A part's place in the spool, and how long its sealed bytes are. */
export interface Span {
  offset: number;
  length: number;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class Spool {
  private readonly key = randomBytes(32);
  private file: Promise<FileHandle> | undefined;
  private end = 0;
  /** Sealed bytes not yet in the file (held in memory meanwhile). */
  pendingBytes = 0;
  /** The writes under way: a read waits for them (they never reject: a failure is kept in `failed`). */
  private written: Promise<unknown> = Promise.resolve();
  /** The first write that failed (no temporary folder, a full disk): every read after it fails with it. */
  private failed: Error | undefined;

  /** Keeps `text`; its span is known at once, its bytes reach the file in the background. */
  append(text: string): Span {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([iv, cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    const span = { offset: this.end, length: sealed.length };
    this.end += sealed.length;
    this.pendingBytes += sealed.length;
    const write = this.handle()
      .then((handle) => handle.write(sealed, 0, sealed.length, span.offset))
      .catch((error: Error) => {
        this.failed ??= error;
      })
      .finally(() => {
        this.pendingBytes -= sealed.length;
      });
    this.written = Promise.all([this.written, write]);
    return span;
  }

  /** The text kept at `span`. */
  async read(span: Span): Promise<string> {
    await this.written;
    if (this.failed) throw this.failed;
    const handle = await this.handle();
    const sealed = Buffer.alloc(span.length);
    await handle.read(sealed, 0, span.length, span.offset);
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(span.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, span.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }

  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await this.written.catch(() => {});
    await (await file?.catch(() => undefined))?.close();
  }

  private handle(): Promise<FileHandle> {
    this.file ??= (async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-recording-'));
      const file = path.join(dir, 'spool');
      const handle = await open(file, 'w+', 0o600);
      await unlink(file);
      await rmdir(dir);
      return handle;
    })();
    return this.file;
  }
}
