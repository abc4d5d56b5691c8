import { open } from 'node:fs/promises';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { LineCounter, parseDocument } from 'yaml';
import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import { TOKEN_ID_PATTERN, TOKEN_ID_RULE } from '../../../api/patterns.js';
import { ALL_PERMISSIONS, RULE_TRANSFORMS, type RuleTransform } from '../../../api/permissions.js';
import { interpolate, type InterpolationIssue } from '../../../apply/interpolate.js';
import { Locator, type YamlPath } from '../../../apply/locate.js';
import { schemaIssues } from '../../../apply/schema.js';
import { UserError } from '../../io/errors.js';

/** One case of an access matrix: who asks, for what, and what the answer should be. */
export interface AccessCase {
  /** As written, or `case N` (1-based). */
  name: string;
  /** The line of the case in the file. */
  line: number;
  application?: string;
  api_key?: string;
  token?: string;
  container?: string;
  permission: string;
  expect: 'allow' | 'deny';
  transform?: RuleTransform;
}

/** The largest matrix file read (a matrix is a list of cases people write). */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_CASES = 1000;
const MAX_ALIAS_COUNT = 100;

/** The JSON Schema of a matrix file; the messages are apply's (schemaIssues), field by field. */
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['cases'],
  properties: {
    $schema: { type: 'string' },
    cases: { type: 'array', minItems: 1, maxItems: MAX_CASES, items: { $ref: '#/definitions/case' } },
  },
  definitions: {
    case: {
      type: 'object',
      additionalProperties: false,
      required: ['permission', 'expect'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH },
        application: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH },
        api_key: { type: 'string', minLength: 1, maxLength: 1000 },
        token: { type: 'string', pattern: TOKEN_ID_PATTERN },
        container: { type: 'string', pattern: '^/([A-Za-z0-9_-]+/)*$', maxLength: 500 },
        permission: { enum: ALL_PERMISSIONS },
        expect: { enum: ['allow', 'deny'] },
        transform: { enum: RULE_TRANSFORMS },
      },
    },
  },
} as const;

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv({ allErrors: true, strict: true, verbose: true }).compile(SCHEMA);
  return compiled;
}

/**
 * The cases of a matrix file: YAML (or JSON), `${env:NAME}` resolved in its values, checked against
 * the schema, then case by case (one Application, at most one token or container, a transform only
 * for `allow`). A file that does not load is a UserError of one line naming `file:line`, the case and
 * the field (with how many more problems there are).
 */
export async function loadMatrix(
  file: string,
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<AccessCase[]> {
  const text = await readMatrixText(path.resolve(cwd, file), file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const { line, col } = lines.linePos(syntax.pos[0]);
    throw new UserError(`${file}:${line}:${col} ${syntax.message.split('\n')[0]}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) ?? {};
  } catch (error) {
    throw new UserError(`${file}: ${(error as Error).message.split('\n')[0]}`);
  }
  const report = new Report(file, new Locator(doc, lines), value);
  const found: InterpolationIssue[] = [];
  const matrix = interpolate(value, env, found) as { cases: Omit<AccessCase, 'line'>[] };
  for (const issue of found) report.add(issue.path, issue.message);
  const validate = validator();
  if (!validate(matrix)) {
    for (const issue of schemaIssues(validate.errors)) {
      const field = issue.path[issue.path.length - 1];
      report.add(issue.path, field === 'token' && !issue.atKey ? TOKEN_ID_RULE : issue.message, issue.atKey);
    }
  }
  report.throwIfAny();
  matrix.cases.forEach((item, i) => {
    checkCase(item, (field, message) => report.add(['cases', i, ...(field ? [field] : [])], message));
  });
  report.throwIfAny();
  return matrix.cases.map((item, i) => ({
    ...item,
    name: item.name ?? `case ${i + 1}`,
    line: report.locator.line(['cases', i]),
  }));
}

/** What the schema cannot say: the rules that span a case's fields. */
function checkCase(item: Omit<AccessCase, 'line'>, add: (field: string | undefined, message: string) => void): void {
  if (item.application === undefined && item.api_key === undefined) {
    add(undefined, 'names no Application: give application (a name or id) or api_key');
  }
  if (item.application !== undefined && item.api_key !== undefined) {
    add('api_key', 'give application or api_key, not both');
  }
  if (item.token !== undefined && item.container !== undefined) add('container', 'give token or container, not both');
  if (item.transform !== undefined && item.expect === 'deny') {
    add('transform', 'only with expect: allow (a refusal has no transform)');
  }
}

/** The problems of a file, each `file:line: case N "name", field: message`, the first thrown. */
class Report {
  private readonly issues: string[] = [];

  constructor(
    private readonly file: string,
    readonly locator: Locator,
    private readonly value: unknown,
  ) {}

  add(at: YamlPath, message: string, atKey = false): void {
    this.issues.push(`${this.file}:${this.locator.line(at, atKey)}: ${this.where(at)}${message}`);
  }

  throwIfAny(): void {
    const [first] = this.issues;
    if (first === undefined) return;
    const more = this.issues.length - 1;
    throw new UserError(more > 0 ? `${first} (and ${more} more problem${more === 1 ? '' : 's'})` : first);
  }

  /** `case 2 "support reads cards", expect: ` for a field of a case, `cases: ` above the cases. */
  private where(at: YamlPath): string {
    const [section, index, ...rest] = at;
    if (section !== 'cases' || typeof index !== 'number') return at.length > 0 ? `${at.join('.')}: ` : '';
    const cases = (this.value as { cases?: unknown[] }).cases;
    const name = (cases?.[index] as { name?: unknown } | undefined)?.name;
    const named = typeof name === 'string' ? ` ${JSON.stringify(name)}` : '';
    return `case ${index + 1}${named}${rest.length > 0 ? `, ${rest.join('.')}` : ''}: `;
  }
}

/** The file's text, bounded; a file that cannot be read is one line saying why. */
async function readMatrixText(absolute: string, shown: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(absolute, 'r');
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UserError(`Cannot read ${shown}: not a file.`);
    if (stat.size > MAX_FILE_BYTES)
      throw new UserError(`Cannot read ${shown}: over 1 MB (a matrix is a list of cases).`);
    return await handle.readFile('utf8');
  } catch (error) {
    if (error instanceof UserError) throw error;
    const { code, message } = error as NodeJS.ErrnoException;
    throw new UserError(`Cannot read ${shown}: ${code === 'ENOENT' ? 'no such file' : message}.`);
  } finally {
    await handle?.close();
  }
}
