import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = readFileSync(path.join(ROOT, 'docs/fidelity.md'), 'utf8');

/** docs/fidelity.md says which test keeps each behaviour true: every file or folder it names must exist. */
describe('docs/fidelity.md', () => {
  const named = [...new Set([...DOC.matchAll(/`(test\/[^`\s]+)`/g)].map((match) => match[1]!))];

  it('names the tests that keep its rows true', () => {
    expect(named.length).toBeGreaterThan(10);
  });

  it.each(named)('%s exists', (file) => {
    expect(existsSync(path.join(ROOT, file)), `${file} is named in docs/fidelity.md`).toBe(true);
  });

  it('has a row per behaviour with a test for each, and holds the runtime rows', () => {
    const rows = DOC.split('\n').filter(
      (line) => line.startsWith('| ') && !line.startsWith('| Platform') && !line.startsWith('|---'),
    );
    for (const row of rows) expect(row, 'a row names no test').toMatch(/`test\//);
    expect(DOC).toMatch(/^## The runtime$/m);
    expect(DOC).toContain('NODE16_ABSENT');
  });
});
