import type { Output } from '../../io/output.js';
import type { ApplicationCoverage, CaseResult, MatrixRun } from './run.js';

/** A rule no case decided: its Application, its place in priority order and its container. */
export interface UnreachedRule {
  application: { id: string; name: string };
  rule: number;
  priority: number;
  container?: string;
}

/** The results as a table (case, expected, got, what decided), each mismatch's reason, and a summary line. */
export async function showRun(output: Output, run: MatrixRun, file: string): Promise<void> {
  await output.table(run.cases, [
    { header: 'RESULT', value: (row) => (row.pass ? 'ok' : 'FAIL') },
    { header: 'CASE', value: (row) => row.name },
    { header: 'EXPECTED', value: (row) => words(row.expected.outcome, row.expected.transform) },
    { header: 'GOT', value: (row) => words(row.got.outcome, row.got.transform) },
    { header: 'DECIDED BY', value: (row) => row.decided },
  ]);
  const failures = run.cases.filter((row) => !row.pass);
  if (failures.length > 0) output.line();
  for (const row of failures) output.line(`${file}:${row.line} ${row.name}: ${mismatch(row)}`);
  output.line();
  const total = run.cases.length;
  output.line(`${total} case${total === 1 ? '' : 's'}: ${run.passed} passed, ${run.failed} failed.`);
}

/** Per Application, how many cases each rule, the plain permissions and nothing decided; then the rules none did. */
export async function showCoverage(output: Output, coverage: ApplicationCoverage[]): Promise<void> {
  const rows = coverage.flatMap((entry) => [
    ...entry.rules.map((rule) => ({
      application: entry.name,
      by: `rule #${rule.index}${rule.container === undefined ? '' : ` ${rule.container}`}`,
      priority: String(rule.priority),
      description: rule.description ?? '',
      cases: rule.cases,
    })),
    { application: entry.name, by: 'plain permissions', priority: '', description: '', cases: entry.plain_permissions },
    { application: entry.name, by: 'nothing', priority: '', description: '', cases: entry.undecided },
  ]);
  output.line();
  await output.table(rows, [
    { header: 'APPLICATION', value: (row) => row.application },
    { header: 'DECIDED BY', value: (row) => row.by },
    { header: 'PRIORITY', value: (row) => row.priority },
    { header: 'CASES', value: (row) => String(row.cases) },
    { header: 'DESCRIPTION', value: (row) => row.description },
  ]);
  const unreached = unreachedOf(coverage);
  output.line();
  if (unreached.length === 0) {
    output.line('Every access rule decided at least one case.');
    return;
  }
  const named = unreached.map(
    (item) => `${item.application.name} rule #${item.rule}${item.container === undefined ? '' : ` ${item.container}`}`,
  );
  output.line(`Rules no case decided (${unreached.length}): ${named.join(', ')}.`);
}

/** The rules of the covered Applications that decided no case. */
export function unreachedOf(coverage: ApplicationCoverage[]): UnreachedRule[] {
  return coverage.flatMap((entry) =>
    entry.rules
      .filter((rule) => rule.cases === 0)
      .map((rule) => ({
        application: { id: entry.id, name: entry.name },
        rule: rule.index,
        priority: rule.priority,
        ...(rule.container !== undefined && { container: rule.container }),
      })),
  );
}

function words(outcome: string, transform: string | undefined): string {
  return transform === undefined ? outcome : `${outcome} ${transform}`;
}

function mismatch(row: CaseResult): string {
  const expected = words(row.expected.outcome, row.expected.transform);
  const got = words(row.got.outcome, row.got.transform);
  return `expected ${expected}, got ${got} (${row.reason})`;
}
