import { packageVersion } from '../../../lib/package-version.js';
import { openApiDocument } from '../openapi/document.js';
import type { Route } from '../route.js';

/**
 * `GET /_emulator/openapi.json`: the OpenAPI 3.1 document of every route of `table` (the whole
 * route table, this one included), made once. No key: it holds no tenant's data.
 */
export function openApiRoutes(table: () => readonly Route[]): readonly Route[] {
  let text: string | undefined;
  return [
    {
      method: 'GET',
      path: '/_emulator/openapi.json',
      summary: 'The OpenAPI 3.1 document of this API, as the emulator implements it.',
      public: true,
      responses: {
        200: {
          description: 'The document (also shipped as dist/openapi.json, the package export svc/openapi.json).',
          schema: {
            type: 'object',
            required: ['openapi', 'info', 'paths'],
            properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' } },
          },
        },
      },
      handler: () => {
        text ??= JSON.stringify(openApiDocument(table(), packageVersion()));
        return { status: 200, json: text };
      },
    },
  ];
}
