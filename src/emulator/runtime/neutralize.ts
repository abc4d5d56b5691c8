import { tokTypes, tokenizer } from 'acorn';

/** What SES refuses on sight, wherever it stands in the source text (it does not parse). */
const TRIGGERS = /\bimport\s*(?:\(|\/[/*])|<!--|-->/;

/**
 * SES rejects any source containing `import(` or an HTML comment marker, even inside a string or a
 * comment, because it cannot tell them apart without parsing. This rewrites such text where it is
 * only text, so the code means exactly what it did: inside string and template literals the
 * characters become escapes with the same value (`import` -> `\u0069mport`), inside comments they
 * are broken up. A real `import(...)` expression is left for SES to refuse.
 */
export function neutralizeSesTriggers(source: string): string {
  if (!TRIGGERS.test(source)) return source;
  const edits: { start: number; end: number; kind: 'literal' | 'comment' }[] = [];
  try {
    const tokens = tokenizer(source, {
      ecmaVersion: 'latest',
      allowHashBang: true,
      allowReturnOutsideFunction: true,
      onComment: (_block, _text, start, end) => edits.push({ start, end, kind: 'comment' }),
    });
    for (const token of tokens) {
      if (token.type === tokTypes.string || token.type === tokTypes.template)
        edits.push({ start: token.start, end: token.end, kind: 'literal' });
    }
  } catch {
    return source; // not tokenizable: let the compiler give its own message
  }
  let result = '';
  let at = 0;
  for (const { start, end, kind } of edits.sort((a, b) => a.start - b.start)) {
    result += source.slice(at, start) + rewrite(source.slice(start, end), kind);
    at = end;
  }
  return result + source.slice(at);
}

function rewrite(text: string, kind: 'literal' | 'comment'): string {
  if (kind === 'comment')
    return text
      .replace(/\bimport\b/g, 'imp0rt')
      .replace(/<!--/g, '<! --')
      .replace(/-->/g, '- ->');
  return text
    .replace(/\bimport\b/g, '\\u0069mport')
    .replace(/<!--/g, '\\u003c!--')
    .replace(/-->/g, '--\\u003e');
}

/**
 * TypeScript's `__extends` helper (and its minified forms) makes a class's prototype with
 * `function __() { this.constructor = d; }` on a new object inheriting the parent's prototype. For a
 * parent of the language (Array, Map: xmlbuilder2's classes extend Array), that prototype is frozen
 * and its `constructor` read-only, so the assignment throws (the "override mistake"). The helper's
 * body is rewritten to define the property, which is what the assignment does on a prototype that
 * is not frozen: the same enumerable, writable own `constructor`.
 */
const EXTENDS_HELPER = /function\s*([\w$]*)\s*\(\)\s*\{\s*this\.constructor\s*=\s*([\w$]+)\s*;?\s*\}/g;

export function defineConstructorInExtends(source: string): string {
  if (!source.includes('this.constructor')) return source;
  return source.replace(
    EXTENDS_HELPER,
    (_match, name: string, value: string) =>
      `function ${name}() { Object.defineProperty(this, "constructor", { value: ${value}, writable: true, enumerable: true, configurable: true }); }`,
  );
}
