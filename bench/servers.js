// Baseline servers for `npm run bench`, each run as its own process so that it has a core to
// itself, as the emulator under test has: `node bench/servers.js <kind> [args]` prints its URL.
//   canned <bytes>        answers every request with a canned JSON body of about that size
//   function              POST: runs the benchmark reactor function in-process, answers its JSON
//   destination           a proxy destination: reads the body, answers a small JSON document (with a length)
//   forwarder <dest-url>  node:http + undici Pool forwarding every request, doing no other work
//   tokenizer             POST: a token's floor: parses the body, seals its data (AES-256-GCM, the token
//                         bound as associated data), keeps it in a Map and answers it (no auth, checks or log)
//   function-process      POST: the floor of a process sandbox: the function runs in a child process, each
//                         call a line of JSON over its stdin and the result a line back (no checks or log);
//                         the child is this script again, as `function-child`
import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';

const [kind, arg] = process.argv.slice(2);
// An orderly exit on SIGTERM, so that a profile (bench/profile.js) is written.
process.on('SIGTERM', () => process.exit(0));

function listen(handler) {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`));
}

/**
 * Writes lines as svc's sandbox channel does: the first of a turn of the event loop at once, the
 * others of that turn together when it ends (one write, one wake-up of the reader, for many).
 */
function lineWriter(stream) {
  let queued;
  return (line) => {
    if (queued !== undefined) {
      queued.push(line);
      return;
    }
    queued = [];
    setImmediate(() => {
      if (queued.length > 0) stream.write(`${queued.join('\n')}\n`);
      queued = undefined;
    });
    stream.write(`${line}\n`);
  };
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
} else if (kind === 'tokenizer') {
  const key = randomBytes(32);
  const tokens = new Map();
  listen(async (request, response) => {
    const { type, data } = JSON.parse((await readBody(request)).toString());
    const id = randomUUID();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(id));
    const ct = Buffer.concat([cipher.update(JSON.stringify(data)), cipher.final()]);
    const created_at = new Date().toISOString();
    tokens.set(id, { type, created_at, iv, tag: cipher.getAuthTag(), ct });
    const text = JSON.stringify({ id, type, data, containers: ['/general/'], metadata: {}, created_at });
    response
      .writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      .end(text);
  });
} else if (kind === 'function-process') {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, 'function-child'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill());
  // A child that dies fails the run at once, rather than leaving its calls unanswered.
  child.on('exit', (code, signal) => {
    process.stderr.write(`the function-process child exited (${signal ?? code})\n`);
    process.exit(1);
  });
  const pending = new Map();
  const send = lineWriter(child.stdin);
  let seq = 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { id, result } = JSON.parse(line);
    pending.get(id)(result);
    pending.delete(id);
  });
  listen(async (request, response) => {
    const { args } = JSON.parse((await readBody(request)).toString() || '{}');
    const id = ++seq;
    const result = await new Promise((resolve) => {
      pending.set(id, resolve);
      send(JSON.stringify({ id, args: args ?? {} }));
    });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
  });
} else if (kind === 'function-child') {
  const { reactor } = await import('./reactor.js');
  const send = lineWriter(process.stdout);
  createInterface({ input: process.stdin }).on('line', async (line) => {
    const { id, args } = JSON.parse(line);
    const result = await reactor({ args, configuration: {}, svc: null });
    send(JSON.stringify({ id, result }));
  });
} else {
  process.stderr.write(`unknown server kind ${kind}\n`);
  process.exit(2);
}
