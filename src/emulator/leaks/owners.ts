/**
 * What each code version was revealed (pure bookkeeping): a reactor's, or a proxy transform's,
 * values from every call it ran, kept while the version lives (its module state, its top-level
 * timers may hold them and print them from any later call or from no call), forgotten when the
 * runtime says the version is retired or unloaded. Bounded per version, oldest values dropped first.
 */
import { CallSecrets, type SecretsBound } from './secrets.js';

/** What one code version keeps at most: its last 256 values, and 256 KB of them and their forms. */
export const OWNER_BOUND: SecretsBound = { values: 256, bytes: 256 * 1024 };

export class OwnerSecrets {
  /** By code id (a reactor's, a transform's runtime id), then by version. */
  private readonly byCode = new Map<string, Map<string, CallSecrets>>();

  constructor(private readonly bound: SecretsBound = OWNER_BOUND) {}

  /** The set of a code version, made empty the first time. */
  of(codeId: string, version: string | number): CallSecrets {
    let versions = this.byCode.get(codeId);
    if (!versions) this.byCode.set(codeId, (versions = new Map()));
    let set = versions.get(String(version));
    if (!set) versions.set(String(version), (set = new CallSecrets(this.bound)));
    return set;
  }

  /** The sets of every live version of a code id (a console line names its code, not its version). */
  ofCode(codeId: string | undefined): CallSecrets[] {
    const versions = codeId === undefined ? undefined : this.byCode.get(codeId);
    return versions ? [...versions.values()] : [];
  }

  /** A version was retired or unloaded: its process can no longer hold what it was revealed. */
  forget(codeId: string, version: string | number): void {
    const versions = this.byCode.get(codeId);
    if (!versions) return;
    versions.delete(String(version));
    if (versions.size === 0) this.byCode.delete(codeId);
  }

  /** How many versions are kept (tests). */
  get versions(): number {
    let count = 0;
    for (const versions of this.byCode.values()) count += versions.size;
    return count;
  }
}
