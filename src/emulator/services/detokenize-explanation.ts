/**
 * The explanation of a refused detokenization (issue 30): the refusal's own, and for each `{{ }}`
 * expression of the body the token, its containers, what decided and the outcome. Built only when
 * a detokenization is refused, by evaluating each token again; never holds a token's value.
 */
import type { Explanation } from '../../api/explanation.js';
import type { TokenRecord } from '../store/records.js';
import { explainAccess, type NamedGrantee } from './access.js';
import type { Secret } from './token-creation.js';
import { type ExpressionVerdict, explainExpressions } from './token-expansion.js';

/** What the explanation reads of the tokens: a record by id (the caller's view), a record's secret. */
export interface TokenLookup {
  find(id: string): TokenRecord | undefined;
  unseal(record: TokenRecord): Secret;
}

/** The explanation of a token that does not exist, to the Application that named it. */
export function notFoundExplanation(application: NamedGrantee, id: string): Explanation {
  return {
    decision: 'not_found',
    reason: `token ${id} does not exist (or has expired, or is another tenant's)`,
    application: { id: application.id, name: application.name, type: application.type },
    operation: 'token:use',
  };
}

/** More tokens or expressions than one detokenization takes: refused before any token is read. */
export function tooManyExplanation(application: NamedGrantee, detail: string): Explanation {
  return {
    decision: 'malformed',
    reason: `over a bound of detokenization: ${detail}`,
    application: { id: application.id, name: application.name, type: application.type },
    operation: 'token:use',
  };
}

/** A token whose grant cannot be detokenized (redacted, or masked without a mask): refused, with its access. */
export function unusableExplanation(application: NamedGrantee, record: TokenRecord, why: string): Explanation {
  return { ...explainAccess(application, 'token:use', record.containers, record.id), decision: 'denied', reason: why };
}

/** Adds each expression of `source` to `explanation`. */
export function withExpressions(
  explanation: Explanation,
  application: NamedGrantee,
  source: unknown,
  tokens: TokenLookup,
): Explanation {
  explanation.expressions = explainExpressions(source, (id) => verdict(application, id, tokens));
  return explanation;
}

function verdict(application: NamedGrantee, id: string, tokens: TokenLookup): ExpressionVerdict {
  const record = tokens.find(id);
  if (!record) return { token_id: id, outcome: 'not_found', reason: 'no such token (or expired)' };
  const access = explainAccess(application, 'token:use', record.containers, id);
  const seen = { token_id: id, container: record.containers.join(', '), decided_by: access.decided_by ?? null };
  if (access.decision !== 'granted' || access.transform === undefined)
    return { ...seen, outcome: 'denied', reason: access.reason };
  const transform = access.transform;
  if (transform === 'reveal') return { ...seen, transform, outcome: 'revealed', reason: access.reason };
  if (transform === 'redact')
    return { ...seen, transform, outcome: 'redacted', reason: `${access.reason}: detokenizing needs reveal` };
  let secret: Secret;
  try {
    secret = tokens.unseal(record);
  } catch {
    return { ...seen, transform, outcome: 'error', reason: 'the token cannot be decrypted' };
  }
  return secret.mask === undefined
    ? { ...seen, transform, outcome: 'denied', reason: `${access.reason}, and the token has no mask` }
    : { ...seen, transform, outcome: 'masked', reason: access.reason };
}
