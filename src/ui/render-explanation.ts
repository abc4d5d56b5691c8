import type {
  Criterion,
  DecidedBy,
  ExplainedExpression,
  ExplainedRule,
  Explanation,
  ExplanationDecision,
  StoredExplanation,
} from '../api/explanation.js';
import { safeText } from '../lib/terminal-text.js';
import { painter, type Paint } from './paint.js';

/**
 * The words and colours of `svc explain`: a decision as a tree (what was asked, each check, the
 * result), as OPA's `--explain` and SpiceDB's `zed --explain` show theirs. Plain text; colour only
 * when asked for (a terminal without NO_COLOR). Every text the server chose (names, descriptions,
 * containers, conditions, reasons, expressions) is made safe for a terminal (lib/terminal-text.ts)
 * before it is painted, so the result is written as it is.
 */

interface TreeNode {
  text: string;
  children?: TreeNode[];
}

const DECISION_STYLES: Record<ExplanationDecision, 'green' | 'red' | 'yellow'> = {
  granted: 'green',
  denied: 'red',
  unauthenticated: 'red',
  not_found: 'yellow',
  malformed: 'yellow',
  error: 'yellow',
};

/** A stored decision: the request it was made for, then its tree. */
export function formatStoredExplanation(stored: StoredExplanation, options: { color: boolean }): string {
  const paint = painter(options.color);
  const head = `${paint('bold', `${safeText(stored.method)} ${safeText(stored.path)}`)} -> ${stored.status}`;
  const meta = paint('dim', `trace ${safeText(stored.trace_id)}, ${safeText(stored.time)}`);
  return `${head}  ${meta}\n${formatExplanation(stored.explanation, options)}`;
}

/** One explanation as a tree, its last line the decision and its one-line reason. */
export function formatExplanation(explanation: Explanation, options: { color: boolean }): string {
  const paint = painter(options.color);
  const nodes: TreeNode[] = [asked(explanation, paint)];
  const checks = checkNodes(explanation, paint);
  if (checks.length > 0) nodes.push({ text: 'checks', children: checks });
  if (explanation.expressions?.length) {
    nodes.push({
      text: 'expressions',
      children: explanation.expressions.map((item) => expression(item, explanation, paint)),
    });
  }
  nodes.push(result(explanation, paint));
  return `${drawTree(nodes).join('\n')}\n`;
}

function asked(explanation: Explanation, paint: Paint): TreeNode {
  const { application, token } = explanation;
  const children: TreeNode[] = [
    {
      text: `application  ${
        application
          ? `${paint('bold', safeText(application.name))} ${paint('dim', `(${safeText(application.type)}, ${safeText(application.id)})`)}`
          : paint('dim', 'none (no key, or a key no Application holds)')
      }`,
    },
  ];
  const permission = explanation.permission?.name ?? explanation.operation;
  if (permission !== undefined) children.push({ text: `permission   ${safeText(permission)}` });
  if (token) {
    const containers = token.containers.length > 0 ? token.containers.map(safeText).join(', ') : '(none)';
    children.push({ text: `token        ${safeText(token.id)} ${paint('dim', 'in')} ${containers}` });
  }
  return { text: 'asked', children };
}

function checkNodes(explanation: Explanation, paint: Paint): TreeNode[] {
  const nodes: TreeNode[] = [];
  const { permission, rules } = explanation;
  if (permission) {
    const held = permission.held_plainly;
    const words = held
      ? `${safeText(permission.name)} is one of them`
      : `${safeText(permission.name)} is not among them`;
    const decided = isPlain(explanation.decided_by) ? ` ${paint('bold', '<- decided')}` : '';
    nodes.push({ text: `${mark(held, paint)} plain permissions: ${words}${decided}` });
  }
  if (rules !== undefined) {
    const children = rules.map((rule) => ruleNode(rule, explanation, paint));
    const text = rules.length > 0 ? 'access rules, in priority order' : `access rules: ${paint('dim', 'none')}`;
    nodes.push({ text, ...(children.length > 0 && { children }) });
  }
  return nodes;
}

function ruleNode(rule: ExplainedRule, explanation: Explanation, paint: Paint): TreeNode {
  const decided = ruleOf(explanation.decided_by) === rule.index;
  const miss = explanation.nearest_miss?.rule === rule.index && !decided ? explanation.nearest_miss : undefined;
  const note = decided
    ? ` ${paint('bold', '<- decided')}`
    : miss
      ? ` ${paint('yellow', `<- nearest miss (${miss.failed})`)}`
      : '';
  const description = rule.description ? ` ${paint('dim', JSON.stringify(safeText(rule.description)))}` : '';
  // ✓ a rule that applies and grants, ✗ one that applies and refuses, a dim · one that does not apply.
  const sign = rule.matched ? mark(rule.criteria.permission, paint) : paint('dim', '·');
  const head = `${sign} ${ruleName(rule)} ${paint('dim', `priority ${rule.priority}`)}${description}${note}`;
  const criteria = [
    `container ${rule.container === undefined ? '' : `${safeText(rule.container)} `}${criterion(rule.criteria.container, paint)}`,
    `conditions ${criterion(rule.criteria.conditions, paint)}`,
    `permission ${criterion(rule.criteria.permission, paint)}`,
  ].join(paint('dim', ' · '));
  const children: TreeNode[] = [{ text: criteria }];
  if (rule.conditions?.length) children.push({ text: `conditions ${paint('dim', quoteJson(rule.conditions))}` });
  children.push({ text: `grants ${rule.permissions.map(safeText).join(', ')} as ${safeText(rule.transform)}` });
  return { text: head, children };
}

function expression(item: ExplainedExpression, explanation: Explanation, paint: Paint): TreeNode {
  const style =
    item.outcome === 'revealed' || item.outcome === 'masked' || item.outcome === 'redacted'
      ? 'green'
      : item.outcome === 'denied'
        ? 'red'
        : 'yellow';
  const by = item.decided_by === undefined ? '' : ` ${paint('dim', `(${decidedWords(item.decided_by, explanation)})`)}`;
  const where = [
    item.token_id && `token ${safeText(item.token_id)}`,
    item.container && `in ${safeText(item.container)}`,
  ]
    .filter(Boolean)
    .join(' ');
  return {
    text: `${safeText(item.expression)} ${paint(style, item.outcome)}${by}`,
    children: [...(where ? [{ text: where }] : []), { text: safeText(item.reason) }],
  };
}

function result(explanation: Explanation, paint: Paint): TreeNode {
  const decision = paint(
    DECISION_STYLES[explanation.decision] ?? 'yellow',
    paint('bold', safeText(explanation.decision)),
  );
  const children: TreeNode[] = [];
  if (explanation.decided_by !== undefined) {
    children.push({ text: `decided by ${decidedWords(explanation.decided_by, explanation)}` });
  }
  // The nearest miss says why nothing decided; beside the rule that decided it says nothing more.
  const miss = explanation.nearest_miss;
  if (miss && ruleOf(explanation.decided_by) !== miss.rule) {
    const rule = explanation.rules?.find((item) => item.index === miss.rule);
    const name = rule ? ruleName(rule) : `rule #${miss.rule}`;
    children.push({ text: `nearest miss ${name}: its ${safeText(miss.failed)} did not match` });
  }
  if (explanation.transform !== undefined) children.push({ text: `transform ${safeText(explanation.transform)}` });
  return { text: `result  ${decision}: ${safeText(explanation.reason)}`, children };
}

/** `rule #1 /pci/` (its place in priority order, and its container when it has one). */
function ruleName(rule: ExplainedRule): string {
  return `rule #${rule.index}${rule.container === undefined ? '' : ` ${safeText(rule.container)}`}`;
}

/** What decided, in words: a rule (by its place and container), the plain permissions, or nothing. */
export function decidedWords(decided: DecidedBy | undefined, explanation: Pick<Explanation, 'rules'>): string {
  if (decided === undefined || decided === null) return 'nothing';
  if (isPlain(decided)) return 'plain permissions';
  const rule = explanation.rules?.find((item) => item.index === decided.rule);
  return rule ? ruleName(rule) : `rule #${decided.rule}`;
}

function isPlain(decided: DecidedBy | undefined): decided is { plain_permissions: true } {
  return typeof decided === 'object' && decided !== null && 'plain_permissions' in decided;
}

function ruleOf(decided: DecidedBy | undefined): number | undefined {
  return typeof decided === 'object' && decided !== null && 'rule' in decided ? decided.rule : undefined;
}

function mark(ok: boolean, paint: Paint): string {
  return ok ? paint('green', '✓') : paint('red', '✗');
}

function criterion(value: Criterion, paint: Paint): string {
  return value === null ? paint('dim', 'n/a') : mark(value, paint);
}

/** Conditions as compact JSON, made safe and cut so that one rule stays one line. */
function quoteJson(value: unknown): string {
  const text = safeText(JSON.stringify(value) ?? '');
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The tree's lines: each node under its parent with `├─`, the last with `└─`, rails `│` between. */
function drawTree(nodes: TreeNode[], prefix = ''): string[] {
  const lines: string[] = [];
  nodes.forEach((node, i) => {
    const last = i === nodes.length - 1;
    lines.push(`${prefix}${last ? '└─ ' : '├─ '}${node.text}`);
    if (node.children?.length) lines.push(...drawTree(node.children, `${prefix}${last ? '   ' : '│  '}`));
  });
  return lines;
}
