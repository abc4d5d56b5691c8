/**
 * Why access was granted or refused (issue 30): the `explanation` member of every 401, 403 and
 * detokenization 400 problem the emulator answers, the stored decision of a past request
 * (`GET /_emulator/explanations/{trace_id}`) and the answer to a hypothetical
 * (`POST /_emulator/explain`). Shared by the emulator, which builds it, and the CLI, which prints
 * it. An explanation never holds a token's value.
 */
import type { RuleTransform } from './permissions.js';

export const EXPLANATION_DECISIONS = [
  'denied',
  'granted',
  'not_found',
  'malformed',
  'error',
  'unauthenticated',
] as const;
/** What was decided: a missing token, a malformed expression and an evaluation error are never `denied`. */
export type ExplanationDecision = (typeof EXPLANATION_DECISIONS)[number];

/** The Application that asked, or null when no key or an unknown key was given. */
export interface ExplainedApplication {
  id: string;
  name: string;
  type: string;
}

/** The permission the operation needs and where the Application holds it. */
export interface ExplainedPermission {
  name: string;
  /** Among the Application's plain permissions. */
  held_plainly: boolean;
  /** The indexes (in `rules`) of the access rules that grant it. */
  held_by_rules: number[];
}

/** A criterion of a rule: true met, false failed, null not applicable (no container, no conditions). */
export type Criterion = boolean | null;

export const RULE_CRITERIA = ['container', 'conditions', 'permission'] as const;
export type RuleCriterionName = (typeof RULE_CRITERIA)[number];

/** One access rule of the Application, as evaluated. */
export interface ExplainedRule {
  /** Its place in priority order (the order of `rules`), 0 first. */
  index: number;
  priority: number;
  description?: string;
  container?: string;
  conditions?: unknown[];
  permissions: string[];
  transform: RuleTransform;
  criteria: { container: Criterion; conditions: Criterion; permission: boolean };
  /** Whether the rule applies to the token (its scope matched): the first that does decides. */
  matched: boolean;
}

/** What decided: a rule (by index in `rules`), the plain permissions, or nothing (refused). */
export type DecidedBy = { rule: number } | { plain_permissions: true } | null;

export interface NearestMiss {
  rule: number;
  failed: RuleCriterionName;
}

export const EXPRESSION_OUTCOMES = [
  'revealed',
  'masked',
  'redacted',
  'denied',
  'not_found',
  'malformed',
  'error',
] as const;
export type ExpressionOutcome = (typeof EXPRESSION_OUTCOMES)[number];

/** The longest an expression is quoted in an explanation (longer ones are cut, with `…`). */
export const EXPRESSION_QUOTE_LIMIT = 200;

/** One `{{ }}` expression of a detokenized body. */
export interface ExplainedExpression {
  /** As written, cut to EXPRESSION_QUOTE_LIMIT characters. */
  expression: string;
  token_id?: string;
  /** The token's containers, comma-separated, when it was found. */
  container?: string;
  decided_by?: DecidedBy;
  transform?: RuleTransform;
  outcome: ExpressionOutcome;
  reason: string;
}

export interface Explanation {
  decision: ExplanationDecision;
  /** One line: what decided (the deciding rule, the missing permission, the bad key...). */
  reason: string;
  application: ExplainedApplication | null;
  /** The permission the operation needs (`token:use`, `reactor:create`). */
  operation?: string;
  permission?: ExplainedPermission;
  /** When a token was involved. */
  token?: { id: string; containers: string[] };
  /** Every access rule of the Application, in priority order. */
  rules?: ExplainedRule[];
  decided_by?: DecidedBy;
  /** When nothing decided: the rule that came closest and the criterion it failed. */
  nearest_miss?: NearestMiss;
  /** When granted: the transform applied. */
  transform?: RuleTransform;
  /** Detokenization: one per `{{ }}` expression. */
  expressions?: ExplainedExpression[];
}

/** `GET /_emulator/explanations/{trace_id}`: the stored decision of a past request. */
export interface StoredExplanation {
  trace_id: string;
  method: string;
  path: string;
  status: number;
  /** ISO 8601. */
  time: string;
  explanation: Explanation;
}

/** `POST /_emulator/explain`: a hypothetical. Exactly one of application / api_key; at most one of token / container. */
export interface ExplainRequest {
  application?: string;
  api_key?: string;
  token?: string;
  container?: string;
  permission: string;
}

export interface ExplainResponse {
  decision: ExplanationDecision;
  explanation: Explanation;
}

/** The path parameter of GET /_emulator/explanations/{trace_id}: a trace id as the emulator takes it. */
export const explanationParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['trace_id'],
  properties: { trace_id: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } },
} as const;

/** The body of POST /_emulator/explain (exactly one of application / api_key is checked by the route). */
export const explainRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['permission'],
  properties: {
    application: { type: 'string', minLength: 1, maxLength: 200 },
    api_key: { type: 'string', minLength: 1, maxLength: 512 },
    token: { type: 'string', minLength: 1, maxLength: 256 },
    container: { type: 'string', pattern: '^/([A-Za-z0-9_-]+/)*$', maxLength: 1024 },
    permission: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;
