import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ALL_PERMISSIONS, APPLICATION_TYPES, RULE_TRANSFORMS } from '../../src/api/permissions.js';
import { SCHEMA_FILE } from '../../src/apply/schema.js';

// The JSON Schema editors use is the file the loader validates with; these keep it true to the API.
describe('templates/svc.schema.json', () => {
  test('ships in the package (a folder listed in package.json files)', async () => {
    const root = path.resolve(path.dirname(SCHEMA_FILE), '..');
    const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { files: string[] };
    expect(manifest.files).toContain(path.basename(path.dirname(SCHEMA_FILE)));
    expect(path.relative(root, SCHEMA_FILE)).toBe(path.join('templates', 'svc.schema.json'));
  });

  test('names the permissions, Application types and rule transforms the API knows', async () => {
    const schema = JSON.parse(await readFile(SCHEMA_FILE, 'utf8'));
    expect(schema.definitions.permission.enum).toEqual([...ALL_PERMISSIONS]);
    expect(schema.definitions.application.properties.type.enum).toEqual([...APPLICATION_TYPES]);
    expect(schema.definitions.rule.properties.transform.enum).toEqual([...RULE_TRANSFORMS]);
    expect(schema.additionalProperties).toBe(false);
  });
});
