// Baseline servers for `npm run bench`, each run as its own process so that it has a core to
// itself, as the emulator under test has: `node bench/servers.js <kind> [args]` prints its URL.
//   canned <bytes>        answers every request with a canned JSON body of about that size
//   function              POST: runs the benchmark reactor function in-process, answers its JSON
//   destination           a proxy destination: reads the body, answers a small JSON document (with a length)
//   forwarder <dest-url>  node:http + undici Pool forwarding every request, doing no other work
import http from 'node:http';
import { Pool } from 'undici';

const [kind, arg] = process.argv.slice(2);
// An orderly exit on SIGTERM, so that a profile (bench/profile.js) is written.
process.on('SIGTERM', () => process.exit(0));

function listen(handler) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
}

function readBody(request) {
  return new Promise((resolve) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

if (kind === 'canned') {
  const body = JSON.stringify({ pad: 'x'.repeat(Math.max(0, Number(arg) - 10)) });
  listen(async (request, response) => {
    await readBody(request);
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
} else if (kind === 'function') {
  const { reactor } = await import('./reactor.js');
  listen(async (request, response) => {
    const { args } = JSON.parse((await readBody(request)).toString() || '{}');
    const result = await reactor({ args: args ?? {}, configuration: {}, svc: null });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
  });
} else if (kind === 'destination') {
  listen(async (request, response) => {
    const body = await readBody(request);
    // With its length, as JSON APIs answer (a proxy may send such an answer in one piece).
    const text = `{"ok":true,"received":${body.length}}`;
    response
      .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      .end(text);
  });
} else if (kind === 'forwarder') {
  const target = new URL(arg);
  const pool = new Pool(target.origin, { connections: 128, keepAliveTimeout: 30_000 });
  listen(async (request, response) => {
    const body = await readBody(request);
    const headers = { ...request.headers };
    delete headers.host;
    delete headers.connection;
    const forwarded = await pool.request({ path: target.pathname, method: request.method, headers, body });
    response.writeHead(forwarded.statusCode, {
      'content-type': forwarded.headers['content-type'] ?? 'application/json',
    });
    for await (const chunk of forwarded.body) response.write(chunk);
    response.end();
  });
} else {
  process.stderr.write(`unknown server kind ${kind}\n`);
  process.exit(2);
}
