/**
 * Finds wall-clock threshold assertions in test files: an upper bound asserted on a time a test
 * measured with the wall clock (`expect(Date.now() - start).toBeLessThan(500)`, or the same through
 * variables: `const elapsed = performance.now() - t0`). Such a verdict depends on how busy the
 * machine is; a test waits for the event it checks instead, and timing goals go in `npm run bench`.
 * A time compared with another clock (a stamp the emulator wrote, a reactor's `Date.now()`) is not a
 * measurement: only a difference of two readings the test itself took counts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Matchers that bound a value from above (the value on the left) or from below (the bound on the right). */
const UPPER_BOUNDS = new Set(['toBeLessThan', 'toBeLessThanOrEqual']);
const LOWER_BOUNDS = new Set(['toBeGreaterThan', 'toBeGreaterThanOrEqual']);

export interface WallClockAssertion {
  file: string;
  line: number;
  text: string;
}

/** Whether `node` is a reading of the wall clock: Date.now(), performance.now(), process.hrtime(.bigint)(), new Date().getTime(). */
function isClockRead(node: ts.Node): boolean {
  if (ts.isCallExpression(node)) {
    const callee = node.expression.getText();
    if (/^(Date\.now|performance\.now|(process\.)?hrtime(\.bigint)?)$/.test(callee)) return true;
    if (ts.isPropertyAccessExpression(node.expression) && /^(getTime|valueOf)$/.test(node.expression.name.text)) {
      const target = node.expression.expression;
      return ts.isNewExpression(target) && target.expression.getText() === 'Date' && !target.arguments?.length;
    }
  }
  return false;
}

/** What each name in a file is set to (declarations and plain assignments), wherever it is. */
function assignments(source: ts.SourceFile): Map<string, ts.Expression[]> {
  const values = new Map<string, ts.Expression[]>();
  const add = (name: string, value: ts.Expression) => values.set(name, [...(values.get(name) ?? []), value]);
  const visit = (node: ts.Node) => {
    // `const t = ...`, and each name of `const [s, ns] = ...` or `const { ms } = ...`.
    if (ts.isVariableDeclaration(node) && node.initializer) {
      const value = node.initializer;
      const names = (name: ts.BindingName): void => {
        if (ts.isIdentifier(name)) add(name.text, value);
        else for (const element of name.elements) if (!ts.isOmittedExpression(element)) names(element.name);
      };
      names(node.name);
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isIdentifier(node.left)
    )
      add(node.left.text, node.right);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return values;
}

/** Whether `test` holds for `node` or a node within it, short of the functions it defines (their code runs elsewhere). */
function some(node: ts.Node, test: (node: ts.Node) => boolean): boolean {
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return false;
  return test(node) || (ts.forEachChild(node, (child) => some(child, test) || undefined) ?? false);
}

/** The names whose value holds what `holds` finds, given the names found so far: grown until it is whole. */
function namesHolding(
  values: Map<string, ts.Expression[]>,
  holds: (node: ts.Node, names: Set<string>) => boolean,
): Set<string> {
  const names = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [name, list] of values) {
      if (!names.has(name) && list.some((value) => holds(value, names))) {
        names.add(name);
        grew = true;
      }
    }
  }
  return names;
}

function scanner(source: ts.SourceFile) {
  const values = assignments(source);
  // A name read (`start`), not a property's name (`moved.start`).
  const named = (node: ts.Node, names: Set<string>) =>
    ts.isIdentifier(node) &&
    names.has(node.text) &&
    !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node);
  const readsClockWith = (node: ts.Node, names: Set<string>) =>
    some(node, (inner) => isClockRead(inner) || named(inner, names));
  const clockNames = namesHolding(values, readsClockWith);
  const readsClock = (node: ts.Node) => readsClockWith(node, clockNames);
  const storedReading = (node: ts.Node) => some(node, (inner) => named(inner, clockNames));
  /**
   * A difference of two clock readings, one of them kept from earlier (two clocks read at one
   * moment are compared, not timed), or hrtime's own elapsed form, `process.hrtime(start)`.
   */
  const elapsedWith = (node: ts.Node, names: Set<string>) =>
    some(
      node,
      (inner) =>
        (ts.isBinaryExpression(inner) &&
          inner.operatorToken.kind === ts.SyntaxKind.MinusToken &&
          readsClock(inner.left) &&
          readsClock(inner.right) &&
          (storedReading(inner.left) || storedReading(inner.right))) ||
        (ts.isCallExpression(inner) && /hrtime$/.test(inner.expression.getText()) && inner.arguments.length > 0) ||
        named(inner, names),
    );
  const elapsedNames = namesHolding(values, elapsedWith);
  return { measuresElapsed: (node: ts.Node) => elapsedWith(node, elapsedNames) };
}

/** The wall-clock threshold assertions in one file's text. */
export function wallClockAssertions(file: string, text: string): WallClockAssertion[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const { measuresElapsed } = scanner(source);
  const found: WallClockAssertion[] = [];
  const visit = (node: ts.Node) => {
    // expect(value).matcher(bound), or expect(value).not.matcher(bound)
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const matcher = node.expression.name.text;
      let subject: ts.Expression = node.expression.expression;
      if (ts.isPropertyAccessExpression(subject) && subject.name.text === 'not') subject = subject.expression;
      if (ts.isCallExpression(subject) && subject.expression.getText() === 'expect' && subject.arguments[0]) {
        const value = subject.arguments[0];
        const bound = node.arguments[0];
        if (
          (UPPER_BOUNDS.has(matcher) && measuresElapsed(value)) ||
          (LOWER_BOUNDS.has(matcher) && bound !== undefined && measuresElapsed(bound))
        ) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.push({ file, line, text: node.getText().split('\n')[0]! });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every test file under `dir` (.test.ts, .test.tsx), relative to it. */
export function testFiles(dir: string, under = ''): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(path.join(dir, under))) {
    const relative = under ? `${under}/${entry}` : entry;
    if (entry === 'node_modules') continue;
    if (statSync(path.join(dir, relative)).isDirectory()) files.push(...testFiles(dir, relative));
    else if (/\.test\.tsx?$/.test(entry)) files.push(relative);
  }
  return files.sort();
}

/** The wall-clock threshold assertions of every test file under `dir`. */
export function wallClockAssertionsIn(dir: string): WallClockAssertion[] {
  return testFiles(dir).flatMap((file) => wallClockAssertions(file, readFileSync(path.join(dir, file), 'utf8')));
}
