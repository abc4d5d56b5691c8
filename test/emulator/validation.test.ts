import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import * as apiSchemas from '../../src/api/schemas.js';
import { HttpError } from '../../src/emulator/errors.js';
import { bodyValidator, schemaCompiler } from '../../src/emulator/validation.js';

/** Every schema the emulator validates with: all are the API's. */
const schemas: Record<string, object> = Object.fromEntries(
  Object.entries(apiSchemas).filter(
    ([, value]) => typeof value === 'object' && value !== null && ('type' in value || 'anyOf' in value),
  ),
);

const compile = (schema: object, httpPart: string) =>
  schemaCompiler({ schema, httpPart, method: 'GET', url: '/x' } as never) as ((data: unknown) => boolean) & {
    errors?: unknown;
  };

describe('route schemas', () => {
  it('are found (the check below is not vacuous)', () => {
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining([
        'createTokenSchema',
        'reactorSchema',
        'proxySchema',
        'createTenantSchema',
        'resultParamsSchema',
      ]),
    );
  });

  // The emulator's ajv skips checking schemas against the meta-schema (it costs ~75 ms at start);
  // this is where they are checked.
  it.each(Object.entries(schemas))(
    '%s is a valid JSON Schema, and compiles with the emulator’s own ajv',
    (_name, schema) => {
      const ajv = new Ajv({ strict: false });
      formats.default(ajv);
      expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
      // Compiled on first use, a schema ajv cannot compile would fail a request, not the start.
      for (const httpPart of ['body', 'querystring']) expect(() => compile(schema, httpPart)({})).not.toThrow();
    },
  );
});

describe('schemaCompiler', () => {
  it('compiles on first use and reports errors on the function, as the request path reads them', () => {
    const validate = compile(apiSchemas.createTokenSchema, 'body');
    expect(validate({ type: 'token', data: 'x' })).toBe(true);
    expect(validate.errors).toBeNull();
    expect(validate({ type: 'token', data: 'x', unknown: 1 })).toBe(false);
    expect(validate.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ keyword: 'additionalProperties' })]),
    );
  });

  it('coerces query strings in place, and leaves body types as sent', () => {
    const query: Record<string, unknown> = { size: '5' };
    expect(compile(apiSchemas.listQuerySchema, 'querystring')(query)).toBe(true);
    expect(query).toEqual({ size: 5, page: 1 });
    expect(compile({ type: 'object', properties: { n: { type: 'integer' } } }, 'body')({ n: '5' })).toBe(false);
  });
});

describe('bounds before validation', () => {
  /** An array whose element reads are counted: whether anything looked at its items. */
  function counted(length: number, item: unknown): { value: unknown[]; reads: () => number } {
    let reads = 0;
    const value = new Proxy(new Array(length).fill(item), {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    return { value, reads: () => reads };
  }

  it('refuses an array over maxItems with one error, without reading its items', () => {
    // A million wrong items: ajv with allErrors would check (and report) each of them.
    const permissions = counted(1_000_000, 1);
    const validate = compile(apiSchemas.createApplicationSchema, 'body');
    expect(validate({ name: 'x', type: 'private', permissions: permissions.value })).toBe(false);
    expect(validate.errors).toEqual([expect.objectContaining({ keyword: 'maxItems', instancePath: '/permissions' })]);
    expect(permissions.reads()).toBe(0);
  });

  it('follows rules, their conditions and the anyOf of a nullable object', () => {
    const conditions = counted(100_000, { attribute: 'id', operator: 'equals', value: 'x' });
    const rule = { priority: 1, transform: 'reveal', permissions: ['token:use'], conditions: conditions.value };
    const validate = compile(apiSchemas.updateApplicationSchema, 'body');
    expect(validate({ name: 'x', rules: [rule] })).toBe(false);
    expect(validate.errors).toEqual([expect.objectContaining({ instancePath: '/rules/0/conditions' })]);
    expect(conditions.reads()).toBe(0);
    const configuration = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`K${i}`, 1]));
    const proxy = compile(apiSchemas.proxySchema, 'body');
    expect(proxy({ name: 'p', destination_url: 'https://example.com', configuration })).toBe(false);
    expect(proxy.errors).toEqual([expect.objectContaining({ keyword: 'maxProperties' })]);
  });

  it('does the same for values that are not HTTP bodies (req.svc)', () => {
    const check = bodyValidator(apiSchemas.createTokenSchema);
    const containers = counted(500_000, 5);
    let thrown: unknown;
    try {
      check({ type: 'token', data: 'x', containers: containers.value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect((thrown as HttpError).errors).toEqual({ containers: ['must have at most 10 items'] });
    expect(containers.reads()).toBe(0);
  });
});
