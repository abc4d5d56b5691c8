import type { OutcomeView, PlanAction, PlanFieldDiff, PlanView } from '../api/plan.js';
import { safeLines, safeText } from '../lib/terminal-text.js';
import { type Paint, painter, type Style } from './paint.js';

/**
 * The words and colours of `svc apply`: a plan as Terraform shows one (`+ create`, `~ update` with
 * field diffs, `-> rename`, `- delete`, a summary line), each change's outcome, and watch lines.
 * Plain text; colour only when asked for (a terminal without NO_COLOR). The shapes are api/plan.ts's,
 * which the engine's Plan extends, so the UI does not depend on the engine. Every chosen text in them
 * (addresses, names, configuration keys and values, paths, code, warnings, errors) is made safe for a
 * terminal (lib/terminal-text.ts) before it is painted, so the result is written as it is.
 */

const CHANGE_SIGNS: Record<'added' | 'removed' | 'changed', [sign: string, style: Style]> = {
  added: ['+', 'green'],
  removed: ['-', 'red'],
  changed: ['~', 'yellow'],
};

const SIGNS: Record<PlanAction, [sign: string, style: Style]> = {
  create: ['+', 'green'],
  update: ['~', 'yellow'],
  rename: ['->', 'cyan'],
  adopt: ['=', 'cyan'],
  delete: ['-', 'red'],
};

/** The plan, one change after another, then the summary line. */
export function formatPlan(plan: PlanView, options: { color: boolean; file?: string }): string {
  const paint = painter(options.color);
  const lines: string[] = [];
  for (const change of plan.changes) {
    const [sign, style] = SIGNS[change.action];
    const notes = [
      change.from !== undefined && `from ${safeText(change.from)}`,
      change.adopted && 'found on the target by its name; svc manages it from now on',
      change.drift && 'changed outside svc since the last apply',
    ].filter(Boolean);
    const noted = notes.length > 0 ? paint('dim', ` (${notes.join('; ')})`) : '';
    lines.push(`  ${paint(style, `${sign} ${change.action}`)} ${paint('bold', safeText(change.address))}${noted}`);
    for (const diff of change.diffs) lines.push(...formatDiff(diff, change.action === 'create', paint));
  }
  if (plan.changes.length > 0) lines.push('');
  for (const orphan of plan.orphans) {
    const file = options.file ?? 'svc.yaml';
    const what = `${safeText(orphan)} is no longer in ${safeText(file)}`;
    lines.push(paint('dim', `${what}; svc leaves it be (--prune deletes it).`));
  }
  for (const warning of plan.warnings) lines.push(paint('yellow', `Warning: ${safeLines(warning, '  ')}`));
  lines.push(summaryLine(plan.changes));
  return `${lines.join('\n')}\n`;
}

function formatDiff(given: PlanFieldDiff, creating: boolean, paint: Paint): string[] {
  const indent = '      ';
  const diff = { ...given, field: safeText(given.field) } as PlanFieldDiff;
  if (diff.type === 'secret') {
    const [sign, style] = CHANGE_SIGNS[diff.change];
    return [`${indent}${paint(style, sign)} ${diff.field} ${paint('dim', `(${creating ? 'set' : diff.change})`)}`];
  }
  if (diff.type === 'code') {
    if (diff.change === 'removed') return [`${indent}${paint('red', '-')} ${diff.field} ${paint('dim', '(removed)')}`];
    if (diff.change === 'added') {
      const size = diff.lines === undefined ? '' : ` (${diff.lines} line${diff.lines === 1 ? '' : 's'})`;
      return [`${indent}${paint('green', '+')} ${diff.field}: ${safeText(diff.path ?? '')}${paint('dim', size)}`];
    }
    const body = (diff.diff ?? '')
      .split('\n')
      .filter((line) => line !== '')
      // Lines of code: each made safe (tabs kept), and indented under the field.
      .map((line) => `${indent}    ${paintDiffLine(safeLines(line), paint)}`);
    return [
      `${indent}${paint('yellow', '~')} ${diff.field}${diff.path ? paint('dim', ` (${safeText(diff.path)})`) : ''}`,
      ...body,
    ];
  }
  if (!('before' in diff)) return [`${indent}${paint('green', '+')} ${diff.field}: ${show(diff.after)}`];
  return [
    `${indent}${paint('yellow', '~')} ${diff.field}: ${show(diff.before)} ${paint('dim', '->')} ${show(diff.after)}`,
  ];
}

function paintDiffLine(line: string, paint: Paint): string {
  if (line.startsWith('@@')) return paint('cyan', line);
  if (line.startsWith('+')) return paint('green', line);
  if (line.startsWith('-')) return paint('red', line);
  return line;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '(none)';
  if (typeof value === 'string') return safeText(value);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return safeText(`[${value.join(', ')}]`);
  return safeText(JSON.stringify(value));
}

/** `Plan: 1 to create, 2 to update, 0 to delete.` (renames and adoptions when there are some), or no changes. */
export function summaryLine(changes: { action: PlanAction }[]): string {
  if (changes.length === 0) return 'No changes: the target matches the configuration.';
  const count = (action: PlanAction) => changes.filter((change) => change.action === action).length;
  const parts = [`${count('create')} to create`, `${count('update')} to update`];
  if (count('rename') > 0) parts.push(`${count('rename')} to rename`);
  if (count('adopt') > 0) parts.push(`${count('adopt')} to adopt`);
  parts.push(`${count('delete')} to delete`);
  return `Plan: ${parts.join(', ')}.`;
}

const DONE: Record<PlanAction, string> = {
  create: 'created',
  update: 'updated',
  rename: 'renamed',
  adopt: 'adopted',
  delete: 'deleted',
};

/** `reactors.charge: updated (23 ms)`, or why it failed or was skipped. */
export function formatOutcome(outcome: OutcomeView, options: { color: boolean; changed?: string[] }): string {
  const paint = painter(options.color);
  const what = options.changed && options.changed.length > 0 ? ` ${safeText(options.changed.join(', '))}` : '';
  const address = paint('bold', safeText(outcome.address));
  const error = safeText(outcome.error ?? '');
  if (outcome.status === 'applied') {
    return `${address}${what} ${paint('green', DONE[outcome.action])} ${paint('dim', `(${outcome.ms} ms)`)}`;
  }
  if (outcome.status === 'skipped') return `${address} ${paint('yellow', 'skipped')}: ${error}`;
  return `${address} ${paint('red', `${outcome.action} failed`)}: ${error}`;
}

/** The last line of an apply. */
export function formatApplied(outcomes: OutcomeView[]): string {
  const failed = outcomes.filter((outcome) => outcome.status !== 'applied').length;
  if (failed > 0) {
    const changes = `change${outcomes.length === 1 ? '' : 's'}`;
    return `Apply failed: ${failed} of ${outcomes.length} ${changes} did not apply; the others did.`;
  }
  const count = (action: PlanAction) => outcomes.filter((outcome) => outcome.action === action).length;
  const parts = (['create', 'update', 'rename', 'adopt', 'delete'] as const)
    .filter((action) => count(action) > 0)
    .map((action) => `${count(action)} ${DONE[action]}`);
  return `Apply complete: ${parts.join(', ') || 'nothing to do'}.`;
}

/**
 * A resource held back while watching (a file it names does not load): `reactors.charge held back,
 * keeps its last good code: charge.js:2:9 Unexpected token`, or, when the target has none, not created.
 */
export function formatHeld(held: { address: string; message: string; kept: boolean }, options: { color: boolean }) {
  const paint = painter(options.color);
  const what = held.kept ? 'held back, keeps its last good code' : 'held back, not created';
  return `${paint('bold', safeText(held.address))} ${paint('yellow', what)}: ${safeLines(held.message, '  ')}`;
}
