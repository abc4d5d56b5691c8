/** svc.yaml as it is once it passed its JSON Schema (templates/svc.schema.json): field names as written. */
import type { ApplicationType, RuleTransform } from '../api/permissions.js';

export interface RawRule {
  description?: string;
  priority: number;
  container: string;
  transform: RuleTransform;
  permissions: string[];
}

export interface RawApplication {
  type: ApplicationType;
  permissions?: string[];
  rules?: RawRule[];
  renamed_from?: string;
}

export interface RawReactor {
  code: string;
  configuration?: Record<string, string> | string;
  application?: string;
  renamed_from?: string;
}

export interface RawProxy {
  destination_url: string;
  request_transform?: string;
  response_transform?: string;
  configuration?: Record<string, string> | string;
  application?: string;
  require_auth?: boolean;
  renamed_from?: string;
}

export interface RawConfig {
  $schema?: string;
  applications?: Record<string, RawApplication>;
  reactors?: Record<string, RawReactor>;
  proxies?: Record<string, RawProxy>;
}
