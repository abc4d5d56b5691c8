// Writes dist/openapi.json, the OpenAPI 3.1 document of the API, from the built route table: the
// package ships it (the export svc/openapi.json) and the emulator serves the same document at
// GET /_emulator/openapi.json. Run by `npm run build` after tsc; made from dist, so never stale.
import { writeFileSync } from 'node:fs';

const dist = new URL('../dist/', import.meta.url);
const { routes } = await import(new URL('emulator/http/routes/index.js', dist).href);
const { openApiDocument } = await import(new URL('emulator/http/openapi/document.js', dist).href);
const { packageVersion } = await import(new URL('lib/package-version.js', dist).href);
writeFileSync(new URL('openapi.json', dist), `${JSON.stringify(openApiDocument(routes, packageVersion()), null, 2)}\n`);
