/**
 * A refusal of an anonymous proxy (require_auth false), as its caller sees it. The caller holds no
 * key of the proxy's tenant: its explanation says what became of each expression, never the bound
 * Application (name, id, permissions, rules and their descriptions) nor a token's containers. The
 * whole explanation is kept for the tenant, read by trace id (GET /_emulator/explanations/{id}).
 */
import type { ExplainedExpression, Explanation } from '../../api/explanation.js';
import { HttpError } from '../errors.js';

const WITHHELD = "refused by the proxy's Application (its tenant reads why by this request's trace id)";

/** Decisions and outcomes whose reason names no configuration (a token, a bound): said as they are. */
const PLAIN_OUTCOMES = new Set(['not_found', 'malformed', 'error']);

/** An HttpError answered with a reduced explanation, the whole one kept for the tenant. */
export class WithheldExplanation extends HttpError {
  constructor(
    error: HttpError,
    /** What the explanation store keeps: the refusal as it was. */
    readonly keptExplanation: Explanation,
  ) {
    super(error.status, error.detail, {
      title: error.title,
      type: error.type,
      errors: error.errors,
      retryAfter: error.retryAfter,
      extensions: { ...error.extensions, explanation: forAnonymousCaller(keptExplanation) },
    });
  }
}

/** `error` as an anonymous caller gets it: unchanged when it carries no explanation. */
export function withheldFromAnonymous(error: unknown): unknown {
  if (!(error instanceof HttpError) || error instanceof WithheldExplanation) return error;
  const explanation = error.extensions?.explanation as Explanation | undefined;
  return explanation === undefined ? error : new WithheldExplanation(error, explanation);
}

function forAnonymousCaller(explanation: Explanation): Explanation {
  return {
    decision: explanation.decision,
    reason: PLAIN_OUTCOMES.has(explanation.decision) ? explanation.reason : WITHHELD,
    application: null,
    ...(explanation.operation !== undefined && { operation: explanation.operation }),
    ...(explanation.expressions !== undefined && { expressions: explanation.expressions.map(expressionOf) }),
  };
}

function expressionOf(expression: ExplainedExpression): ExplainedExpression {
  const plain = PLAIN_OUTCOMES.has(expression.outcome);
  return {
    expression: expression.expression,
    ...(expression.token_id !== undefined && { token_id: expression.token_id }),
    outcome: expression.outcome,
    reason: plain ? expression.reason : WITHHELD,
  };
}
