import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPES } from '../../../src/api/problem.js';
import { ApiClient } from '../../../src/client/index.js';
import { ApplicationsApi } from '../../../src/client/applications.js';
import { ProxiesApi } from '../../../src/client/proxies.js';
import { ReactorsApi } from '../../../src/client/reactors.js';
import type { Requester } from '../../../src/client/requester.js';
import { TokensApi } from '../../../src/client/tokens.js';
import { TransactionsApi } from '../../../src/client/transactions.js';
import { openApiDocument, openApiPath } from '../../../src/emulator/http/openapi/document.js';
import { routes } from '../../../src/emulator/http/routes/index.js';
import { packageVersion } from '../../../src/lib/package-version.js';
import { sharedEmulator, unique } from '../../helpers/emulator.js';
import { mismatchOf, operationOf } from '../../helpers/openapi-check.js';

const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020').default;
const addFormats = require('ajv-formats');

/**
 * The official JSON Schema of OpenAPI 3.1 documents, vendored as test data from
 * https://spec.openapis.org/oas/3.1/schema/2022-10-07 (OAI/OpenAPI-Specification,
 * schemas/v3.1/schema.json). It checks the document's structure; the Schema Objects inside are
 * checked below against JSON Schema 2020-12 itself.
 */
const OAS_31_TEXT = readFileSync(fileURLToPath(new URL('fixtures/oas-3.1-schema.json', import.meta.url)), 'utf8');
/**
 * Alone (without the schema-base extension), the schema's `$dynamicRef: "#meta"` resolves to its
 * own `$defs/schema` (any object or boolean); ajv resolves it elsewhere and refuses every Schema
 * Object, so it is given that static reference.
 */
const OAS_31_SCHEMA = JSON.parse(OAS_31_TEXT, (_key, value) =>
  value?.$dynamicRef === '#meta' ? { $ref: '#/$defs/schema' } : value,
);

const doc = openApiDocument(routes, packageVersion());

function ajv2020(strict: boolean) {
  const ajv = new Ajv2020({ strict, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/** Every Schema Object of the document (components, parameters, bodies, answers). */
function schemasOf(value: unknown, found: object[] = []): object[] {
  if (typeof value !== 'object' || value === null) return found;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'schema' && typeof inner === 'object' && inner !== null) found.push(inner);
    else schemasOf(inner, found);
  }
  return found;
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (the official schema)', () => {
    const ajv = ajv2020(false);
    ajv.addFormat('media-range', /^[\w.+*-]+\/[\w.+*-]+$/);
    const validate = ajv.compile(OAS_31_SCHEMA);
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 1)).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('holds JSON Schema 2020-12 that strict ajv compiles: no ajv-only keyword, nullable or unknown format', () => {
    const components = (doc.components as { schemas: Record<string, object> }).schemas;
    const text = (schema: object) =>
      JSON.stringify(schema).replaceAll('"#/components/', '"https://svc.invalid/openapi.json#/components/');
    // The components under one $id, so that their $refs resolve; each schema then compiled in strict mode.
    const strict = ajv2020(true);
    strict.addKeyword('components');
    strict.addSchema({ $id: 'https://svc.invalid/openapi.json', components: { schemas: components } });
    for (const [name, schema] of Object.entries(components)) {
      expect(() => strict.compile(JSON.parse(text(schema))), name).not.toThrow();
    }
    // Each distinct one once (the same query and path schemas recur on many operations).
    for (const schema of new Set(schemasOf(doc.paths).map(text)))
      expect(() => strict.compile(JSON.parse(schema))).not.toThrow();
    expect(JSON.stringify(doc)).not.toContain('"nullable"');
  });

  it('has every route of the table, each method, its path parameters and a problem for every error status', () => {
    for (const route of routes) {
      for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
        const operation = doc.paths[openApiPath(route.path)]?.[method.toLowerCase()];
        expect(operation, `${method} ${route.path}`).toBeDefined();
        expect(operation!.summary).toBe(route.summary);
        const statuses = Object.keys(operation!.responses);
        expect(
          statuses.some((status) => status.startsWith('2') || status === 'default'),
          route.path,
        ).toBe(true);
        for (const status of statuses.filter((s) => s >= '400' && s !== 'default')) {
          const given = operation!.responses[status]!;
          const shared = (doc.components as { responses: Record<string, { content?: unknown }> }).responses;
          const answer = typeof given.$ref === 'string' ? shared[given.$ref.split('/').pop()!] : given;
          const content = answer?.content as Record<string, { schema: object }>;
          const problem = route.proxy ? content['application/json'] : content['application/problem+json'];
          expect(problem?.schema, `${method} ${route.path} ${status}`).toEqual({
            $ref: `#/components/schemas/${route.proxy ? 'ProxyError' : 'Problem'}`,
          });
        }
        const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
        const declared = ((operation!.parameters ?? []) as { in?: string; name?: string }[])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => parameter.name);
        expect(declared, route.path).toEqual(route.path.endsWith('*') ? [...names, 'path'] : names);
      }
    }
    expect(doc.paths['/_emulator/openapi.json']?.get?.security).toEqual([]);
    expect(doc.paths['/_emulator/tenants']?.post?.['x-svc-loopback-only']).toBe(true);
    expect(doc.paths['/applications']?.post?.['x-svc-permission']).toBe('application:create');
    expect(doc.paths['/proxies/{id}']?.patch?.requestBody).toMatchObject({
      content: { 'application/merge-patch+json': {} },
    });
    expect(doc.paths['/proxy/{path}']?.post?.requestBody).toMatchObject({ content: { '*/*': {} } });
  });

  it('names every problem type, and the explanation extension of a problem', () => {
    const components = (doc.components as { schemas: Record<string, any> }).schemas;
    const types = components.ProblemType.anyOf.map((branch: { const?: string }) => branch.const);
    for (const type of Object.values(PROBLEM_TYPES)) expect(types).toContain(type);
    expect(components.Problem.properties.explanation).toEqual({ $ref: '#/components/schemas/Explanation' });
    expect(components.Problem.properties).toHaveProperty('location');
    expect(components.Problem.properties).toHaveProperty('errors');
    expect(components.Explanation.properties.decision.enum).toContain('not_found');
    expect(components.ProxyError.properties.proxy_error).toEqual({ $ref: '#/components/schemas/Problem' });
    expect((doc.components as any).securitySchemes.ApiKey).toMatchObject({ in: 'header', name: 'SVC-API-KEY' });
  });

  it('tells a described answer from one it does not describe (the hook of the test helpers)', () => {
    const at = (path: string) => `http://127.0.0.1:1${path}`;
    const problem = JSON.stringify({ type: PROBLEM_TYPES.notFound, title: 'Not found', status: 404, detail: 'x' });
    const answer = (method: string, path: string, status: number, text: string, type = 'application/json') => ({
      method,
      url: at(path),
      status,
      contentType: type,
      text,
    });
    expect(mismatchOf(answer('GET', '/reactors/x', 404, problem, 'application/problem+json'))).toBeUndefined();
    expect(mismatchOf(answer('GET', '/nowhere', 404, problem, 'application/problem+json'))).toBeUndefined();
    expect(mismatchOf(answer('GET', '/transactions/x', 409, problem, 'application/problem+json'))).toMatch(
      /status not listed/,
    );
    expect(mismatchOf(answer('GET', '/applications/key', 200, '{"id":1}'))).toMatch(
      /must be string|must have required/,
    );
    expect(
      mismatchOf(
        answer('GET', '/reactors/x', 404, '{"type":"x","title":"t","status":404}', 'application/problem+json'),
      ),
    ).toMatch(/anyOf|must be equal/);
    expect(operationOf('GET', '/applications/key')?.template).toBe('/applications/key');
    expect(operationOf('DELETE', '/proxy/a/b/c')?.template).toBe('/proxy/{path}');
  });
});

describe('GET /_emulator/openapi.json', () => {
  const emu = sharedEmulator();

  it('serves the document without a key, equal to the one the build ships', async () => {
    const served = await emu().call('GET', '/_emulator/openapi.json', { key: null });
    expect(served.status).toBe(200);
    expect(served.body).toEqual(doc);
    // dist/openapi.json is written by the build from the same table (src/emulator/http/openapi/write.ts).
    const shipped = JSON.parse(
      readFileSync(fileURLToPath(new URL('../../../dist/openapi.json', import.meta.url)), 'utf8'),
    );
    expect(shipped).toEqual(doc);
  });

  it("has every route the client calls, with the client's method and path", async () => {
    const calls: string[] = [];
    const recording: Requester = {
      request: async <T>(method: string, path: string) => {
        calls.push(`${method} ${path}`);
        return { pagination: { total_pages: 1 }, data: [] } as T;
      },
    };
    const id = '00000000-0000-4000-8000-000000000000';
    const apps = new ApplicationsApi(recording);
    const tokens = new TokensApi(recording);
    const transactions = new TransactionsApi(recording);
    const reactors = new ReactorsApi(recording);
    const proxies = new ProxiesApi(recording);
    await Promise.all([
      apps.list(),
      apps.get(id),
      apps.self('api'),
      apps.create({ name: 'a', type: 'private' }),
      apps.update(id, { name: 'a' }),
      apps.regenerate(id),
      apps.delete(id),
      tokens.create({ type: 'token', data: 1 }),
      tokens.get('tok'),
      tokens.list({}),
      tokens.delete('tok'),
      tokens.tokenize({}),
      tokens.detokenize({}),
      transactions.create(),
      transactions.get(id),
      transactions.commit(id),
      transactions.rollback(id),
      reactors.invoke(id, {}),
      reactors.result(id, id),
      ...[reactors, proxies].flatMap((api) => [
        api.list(),
        api.get(id),
        api.create({} as never),
        api.update(id, {} as never),
        api.patch(id, {}),
        api.delete(id),
      ]),
    ]);
    const client = new ApiClient({ baseUrl: emu().url, managementKey: emu().managementKey });
    await client.createTenant({ name: unique('openapi') });
    await client.webhookSecret();
    calls.push('POST /_emulator/tenants', 'GET /_emulator/webhook-secret');
    expect(calls.length).toBeGreaterThan(30);
    for (const call of calls) {
      const [method, path] = call.split(' ') as [string, string];
      expect(operationOf(method, path.split('?')[0]!), call).toBeDefined();
    }
  });
});
