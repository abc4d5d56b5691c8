import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { TOKENIZE_LIMIT, TOKENIZE_VALUE_LIMIT } from '../../api/limits.js';
import type { CreateTokenBody } from '../../api/types.js';
import { HttpError } from '../errors.js';
import type { StagedIndex } from './token-view.js';

/** Tokens a tokenize prepares (validates and seals) before it lets other requests run. */
const PREPARE_SLICE = 250;

/** A token a tokenize creates: its body, and where it stands in the value (`[2].card`). */
export interface TokenSite {
  body: CreateTokenBody;
  at: string;
}

/** How the answer shows the token made at a site (by its index in `sites`). */
export interface TokenAnswer {
  /** A `{type, data, ...}` object: the token object. */
  token(site: number): unknown;
  /** A primitive leaf: the token's id. */
  id(site: number): unknown;
}

/**
 * The tokens a tokenize of `value` creates (`sites`, in the order they are found), and `build`,
 * which answers the value with each replaced as `answer` says once the tokens are made.
 */
export function planTokenize(value: unknown, answer: TokenAnswer): { sites: TokenSite[]; build: () => unknown } {
  const sites: TokenSite[] = [];
  const plan = (node: unknown, at: string): (() => unknown) => {
    if (node === null) return () => null;
    if (isTokenSpec(node)) {
      const site = sites.push({ body: node as CreateTokenBody, at }) - 1;
      return () => answer.token(site);
    }
    if (Array.isArray(node)) {
      const items = node.map((child, i) => plan(child, `${at}[${i}]`));
      return () => items.map((item) => item());
    }
    if (typeof node === 'object') {
      const entries: [string, () => unknown][] = [];
      for (const key in node) {
        const child = (node as Record<string, unknown>)[key];
        entries.push([key, plan(child, at ? `${at}.${key}` : key)]);
      }
      return () => fromEntries(entries.map(([key, item]) => [key, item()]));
    }
    const site = sites.push({ body: { type: 'token', data: node }, at }) - 1;
    return () => answer.id(site);
  };
  const build = plan(value, '');
  return { sites, build };
}

/**
 * Prepares every site, a slice at a time so that other requests are served meanwhile; the
 * transaction's staged writes (`staged`) are read again after each pause.
 */
export async function prepareInSlices<T>(
  sites: readonly TokenSite[],
  staged: () => StagedIndex,
  prepare: (site: TokenSite, staged: StagedIndex) => T,
): Promise<T[]> {
  const made: T[] = [];
  let index = staged();
  for (const [i, site] of sites.entries()) {
    if (i > 0 && i % PREPARE_SLICE === 0) {
      await yieldToOthers();
      index = staged();
    }
    made.push(prepare(site, index));
  }
  return made;
}

/**
 * A tokenize's size, counted before any work and stopping at the first value past a limit: at
 * most TOKENIZE_LIMIT tokens, and TOKENIZE_VALUE_LIMIT values in all (the objects, arrays and
 * nulls around them too: a body of a million empty arrays creates no token, yet costs as much).
 */
export function checkTokenizeSize(value: unknown): void {
  let tokens = 0;
  let values = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++values > TOKENIZE_VALUE_LIMIT) {
      throw new HttpError(
        413,
        `A tokenize request holds at most ${TOKENIZE_VALUE_LIMIT.toLocaleString('en-US')} values (objects, arrays and nulls included); split it into several requests.`,
      );
    }
    if (node === null) continue;
    if (typeof node !== 'object' || isTokenSpec(node)) {
      if (++tokens > TOKENIZE_LIMIT) {
        throw new HttpError(
          413,
          `A tokenize request creates at most ${TOKENIZE_LIMIT.toLocaleString('en-US')} tokens; split it into several requests.`,
        );
      }
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else {
      for (const key in node) stack.push((node as Record<string, unknown>)[key]);
    }
  }
}

/**
 * An object with both `type` and `data` is a token to create, validated as POST /tokens would
 * (an unknown field or type is an error, never a reason to tokenize its leaves one by one).
 */
function isTokenSpec(node: unknown): boolean {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return false;
  return Object.hasOwn(node, 'type') && Object.hasOwn(node, 'data');
}

function fromEntries(entries: [string, unknown][]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of entries)
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  return result;
}
