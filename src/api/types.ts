/** Wire types of the platform API (snake_case, as on the wire). */
import type { ApplicationType, RuleTransform } from './permissions.js';

export interface Condition {
  attribute: 'id' | 'container';
  operator: 'starts_with' | 'equals';
  value: string;
}

export interface AccessRule {
  description?: string;
  priority: number;
  container?: string;
  conditions?: Condition[];
  transform: RuleTransform;
  permissions: string[];
}

export interface Application {
  id: string;
  tenant_id: string;
  name: string;
  /** Present only in the responses to create and regenerate. */
  key?: string;
  type: ApplicationType;
  permissions: string[];
  rules: AccessRule[];
  created_by?: string;
  created_at?: string;
  modified_by?: string;
  modified_at?: string;
  expires_at?: string | null;
}

export interface CreateApplicationBody {
  name: string;
  type: ApplicationType;
  permissions?: string[];
  rules?: AccessRule[];
  expires_at?: string | null;
}

export interface UpdateApplicationBody {
  name: string;
  permissions?: string[];
  rules?: AccessRule[];
}

export interface Pagination {
  total_items: number;
  page_number: number;
  page_size: number;
  total_pages: number;
}

export interface Page<T> {
  pagination: Pagination;
  data: T[];
}

export interface ListQuery {
  page?: number | undefined;
  size?: number | undefined;
  id?: string[] | undefined;
  name?: string | undefined;
}

/** The answer of the emulator's loopback-only `POST /_emulator/tenants`. */
export interface CreatedTenant {
  id: string;
  name: string;
  created_at: string;
  management_key: string;
  private_key: string;
}
