import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import * as apiSchemas from '../../src/api/schemas.js';
import { schemaCompiler } from '../../src/emulator/validation.js';

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
  it('compiles on first use and reports errors on the function, as fastify reads them', () => {
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
