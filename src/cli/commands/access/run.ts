import type {
  DecidedBy,
  ExplainRequest,
  ExplainedRule,
  Explanation,
  ExplanationDecision,
} from '../../../api/explanation.js';
import type { RuleTransform } from '../../../api/permissions.js';
import { ApiError, type ApiClient } from '../../../client/index.js';
import { ExplanationsUnavailableError } from '../../../client/explanations.js';
import { NameLookupError } from '../../../requests/errors.js';
import { resolveApplicationId } from '../../../requests/lookup.js';
import { decidedWords } from '../../../ui/render-explanation.js';
import { UserError } from '../../io/errors.js';
import { asCliError } from '../../io/resource-errors.js';
import type { AccessCase } from './matrix.js';

/** What a case got: allow or deny, or what the server found instead (never counted as a deny). */
export type Outcome = 'allow' | 'deny' | Exclude<ExplanationDecision, 'granted' | 'denied' | 'unauthenticated'>;

/** One case run: what it expected, what the target answered, and what decided. */
export interface CaseResult {
  name: string;
  line: number;
  pass: boolean;
  expected: { outcome: 'allow' | 'deny'; transform?: RuleTransform };
  got: { outcome: Outcome; decision: ExplanationDecision; transform?: RuleTransform };
  /** The Application that asked, as the target knows it (null: a key no Application holds). */
  application: { id: string; name: string } | null;
  decided_by: DecidedBy;
  /** What decided, in words (`rule #1 /pci/`, `plain permissions`, `nothing`). */
  decided: string;
  reason: string;
}

/** How many cases each rule of an Application decided. */
export interface ApplicationCoverage {
  id: string;
  name: string;
  rules: { index: number; priority: number; container?: string; description?: string; cases: number }[];
  plain_permissions: number;
  /** Cases of this Application that nothing decided (refused without a rule, not found...). */
  undecided: number;
}

export interface MatrixRun {
  passed: number;
  failed: number;
  cases: CaseResult[];
  /** Each Application's rules in priority order, as the last explanation of it listed them (for coverage). */
  rules: Map<string, ExplainedRule[]>;
}

/**
 * Runs every case against the target, one after another, as the hypothetical of `svc explain`
 * (`POST /_emulator/explain`, the management key). Application names are looked up once each in
 * the API's list. A case the server refuses to evaluate (an unknown Application, a bad field) stops
 * the run with one line naming the case.
 */
export async function runMatrix(client: ApiClient, cases: AccessCase[], file: string): Promise<MatrixRun> {
  const ids = new Map<string, Promise<string>>();
  const results: CaseResult[] = [];
  const rules = new Map<string, ExplainedRule[]>();
  for (const item of cases) {
    try {
      const body: ExplainRequest = {
        permission: item.permission,
        ...(item.api_key !== undefined && { api_key: item.api_key }),
        ...(item.token !== undefined && { token: item.token }),
        ...(item.container !== undefined && { container: item.container }),
      };
      if (item.application !== undefined) {
        const name = item.application;
        if (!ids.has(name)) ids.set(name, resolveApplicationId(client, name));
        body.application = await (ids.get(name) as Promise<string>);
      }
      const answer = await client.explanations.explain(body);
      const { explanation } = answer;
      if (explanation.application && explanation.rules) rules.set(explanation.application.id, explanation.rules);
      results.push(resultOf(item, explanation));
    } catch (error) {
      throw caseError(error, item, file);
    }
  }
  const failed = results.filter((result) => !result.pass).length;
  return { passed: results.length - failed, failed, cases: results, rules };
}

function resultOf(item: AccessCase, explanation: Explanation): CaseResult {
  const outcome = outcomeOf(explanation.decision);
  const transform = outcome === 'allow' ? explanation.transform : undefined;
  const pass = outcome === item.expect && (item.transform === undefined || item.transform === transform);
  const { application } = explanation;
  return {
    name: item.name,
    line: item.line,
    pass,
    expected: { outcome: item.expect, ...(item.transform !== undefined && { transform: item.transform }) },
    got: { outcome, decision: explanation.decision, ...(transform !== undefined && { transform }) },
    application: application ? { id: application.id, name: application.name } : null,
    decided_by: explanation.decided_by ?? null,
    decided: decidedWords(explanation.decided_by, explanation),
    reason: explanation.reason,
  };
}

function outcomeOf(decision: ExplanationDecision): Outcome {
  if (decision === 'granted') return 'allow';
  if (decision === 'denied' || decision === 'unauthenticated') return 'deny';
  return decision;
}

/** An error of one case, in one line that names it (a server without explanations is said as it is). */
function caseError(error: unknown, item: AccessCase, file: string): unknown {
  if (error instanceof ExplanationsUnavailableError) return new UserError(error.message, { cause: error });
  const where = `${file}:${item.line}: case ${JSON.stringify(item.name)}`;
  if (error instanceof NameLookupError) {
    const worded = asCliError(error);
    return new UserError(`${where}: ${(worded as Error).message}`, { cause: error });
  }
  if (error instanceof ApiError && error.status < 500 && error.status !== 401) {
    return new UserError(`${where}: ${error.summary}`, { cause: error });
  }
  return error;
}

/**
 * Coverage: for each Application the cases asked as, how many cases each of its rules decided, how
 * many its plain permissions decided, and how many nothing did.
 */
export function coverageOf(run: MatrixRun): ApplicationCoverage[] {
  const coverage = new Map<string, ApplicationCoverage>();
  for (const result of run.cases) {
    if (!result.application) continue;
    const { id, name } = result.application;
    let entry = coverage.get(id);
    if (!entry) {
      const rules = (run.rules.get(id) ?? []).map((rule) => ({
        index: rule.index,
        priority: rule.priority,
        ...(rule.container !== undefined && { container: rule.container }),
        ...(rule.description !== undefined && { description: rule.description }),
        cases: 0,
      }));
      entry = { id, name, rules, plain_permissions: 0, undecided: 0 };
      coverage.set(id, entry);
    }
    const decided = result.decided_by;
    if (decided && 'rule' in decided) {
      const rule = entry.rules.find((item) => item.index === decided.rule);
      if (rule) rule.cases++;
    } else if (decided && 'plain_permissions' in decided) {
      entry.plain_permissions++;
    } else {
      entry.undecided++;
    }
  }
  return [...coverage.values()];
}
