/** What the store holds: wire objects plus the fields that never leave the emulator. */
import type { Application } from '../../api/types.js';

export interface TenantRow {
  id: string;
  /** A tenant is its own owner, so the tenant collection is keyed like every other. */
  tenant_id: string;
  name: string;
  created_at: string;
  /** Ids of the Applications created at bootstrap, so given keys can be re-applied on restart. */
  bootstrap?: { management?: string; private?: string };
}

export interface ApplicationRecord extends Omit<Application, 'key'> {
  created_at: string;
  /** SHA-256 (hex) of the key; the key itself is never stored. */
  key_hash: string;
}
