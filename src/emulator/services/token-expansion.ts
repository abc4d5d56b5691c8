import {
  BODY_LIMIT_LABEL,
  DETOKENIZE_EXPRESSION_LIMIT,
  DETOKENIZE_LIMIT,
  DETOKENIZED_LIMIT_BYTES,
} from '../../api/limits.js';
import { EXPRESSION_QUOTE_LIMIT, type ExplainedExpression } from '../../api/explanation.js';
import { TOKEN_ID_SOURCE } from '../../api/patterns.js';
import { countExpressions, ExpansionLimitError, type ExpressionCount } from '../../expressions/index.js';
import { HttpError } from '../errors.js';

/** The most bytes a detokenized value may take, and how a refusal names that limit. */
export interface OutputLimit {
  bytes: number;
  says: string;
}

export const PAYLOAD_LIMIT: OutputLimit = {
  bytes: DETOKENIZED_LIMIT_BYTES,
  says: `the ${BODY_LIMIT_LABEL} payload limit`,
};

/**
 * How a proxy body is detokenized: its expressions when the caller has counted them already
 * (`expressionsIn`), and the most it may take once detokenized (the payload limit when not given).
 */
export interface BodyExpansion {
  found?: ExpressionCount;
  limit?: OutputLimit;
}

/**
 * The expressions in `value`, counted no further than one past the limits (`limit` tokens,
 * DETOKENIZE_EXPRESSION_LIMIT expressions): what detokenizing it would have to refuse.
 */
export function expressionsIn(value: unknown, limit = DETOKENIZE_LIMIT): ExpressionCount {
  return countExpressions(value, { ids: limit, occurrences: DETOKENIZE_EXPRESSION_LIMIT });
}

/** At most `limit` tokens and DETOKENIZE_EXPRESSION_LIMIT expressions in `found`, else a 400. */
export function checkExpressionCount({ ids, occurrences }: ExpressionCount, limit: number): void {
  if (ids.length > limit) {
    // Counted no further than one past the limit.
    throw new HttpError(
      400,
      `At most ${limit} tokens can be detokenized at once; this request references ${ids.length} or more.`,
    );
  }
  if (occurrences > DETOKENIZE_EXPRESSION_LIMIT) {
    const most = DETOKENIZE_EXPRESSION_LIMIT.toLocaleString('en-US');
    throw new HttpError(400, `At most ${most} {{ }} expressions can be detokenized at once; this request holds more.`);
  }
}

/** Runs a substitution, its output past `limit` a 413. */
export function expanding<T>(limit: OutputLimit, substitution: () => T): T {
  try {
    return substitution();
  } catch (error) {
    if (error instanceof ExpansionLimitError) throw expansionTooLarge(limit);
    throw error;
  }
}

/** The 413 of a detokenized value past `limit`. */
export function expansionTooLarge(limit: OutputLimit): HttpError {
  return new HttpError(413, `Detokenized, this would be over ${limit.says} (each occurrence of a token counts).`);
}

/** The fewest bytes a token's data can take once substituted: a string as its text, anything else as JSON. */
export function leastBytes(data: unknown): number {
  return Buffer.byteLength(typeof data === 'string' ? data : (JSON.stringify(data) ?? ''));
}

/** How one token id of an expression fared (never its value): what explainExpressions asks per id. */
export type ExpressionVerdict = Omit<ExplainedExpression, 'expression'>;

/** At most this many expressions are listed in an explanation (the rest are not evaluated again). */
export const EXPLAINED_EXPRESSION_LIMIT = DETOKENIZE_LIMIT;

const LOOSE_EXPRESSION = /\{\{([^{}]{0,300})\}\}/g;
const TOKEN_ID = new RegExp(`^\\s*(${TOKEN_ID_SOURCE})\\s*$`);

/**
 * Each `{{ }}` expression in `source` (a JSON value or text), as written, with what became of it:
 * `verdict` judges a token id (once per id); anything between the braces that is not a token id is
 * `malformed` (left as written). Walked only when a refusal is explained.
 */
export function explainExpressions(source: unknown, verdict: (id: string) => ExpressionVerdict): ExplainedExpression[] {
  const judged = new Map<string, ExpressionVerdict>();
  const out: ExplainedExpression[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (out.length >= EXPLAINED_EXPRESSION_LIMIT || depth > 64) return;
    if (typeof value === 'string') {
      if (!value.includes('{{')) return;
      for (const match of value.matchAll(LOOSE_EXPRESSION)) {
        if (out.length >= EXPLAINED_EXPRESSION_LIMIT) return;
        const written = match[0];
        const expression =
          written.length > EXPRESSION_QUOTE_LIMIT ? `${written.slice(0, EXPRESSION_QUOTE_LIMIT - 1)}…` : written;
        const id = TOKEN_ID.exec(match[1]!)?.[1];
        if (id === undefined) {
          out.push({ expression, outcome: 'malformed', reason: 'not a token id: left as written' });
          continue;
        }
        let found = judged.get(id);
        if (!found) judged.set(id, (found = verdict(id)));
        out.push({ expression, ...found });
      }
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) visit(item, depth + 1);
    }
  };
  visit(source, 0);
  return out;
}
