/**
 * Writes dist/openapi.json, the OpenAPI 3.1 document of the API, from the built route table: the
 * package ships it (the export svc/openapi.json) and the emulator serves the same document at
 * GET /_emulator/openapi.json. Run by `npm run build` after tsc (node dist/emulator/http/openapi/write.js);
 * made from what was just built, so never stale. Nothing imports this module.
 */
import { writeFileSync } from 'node:fs';
import { packageVersion } from '../../../lib/package-version.js';
import { routes } from '../routes/index.js';
import { openApiDocument } from './document.js';

writeFileSync(
  new URL('../../../openapi.json', import.meta.url),
  `${JSON.stringify(openApiDocument(routes, packageVersion()), null, 2)}\n`,
);
