import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import type { EmulatorEvent } from '../../src/emulator/index.js';
import { createToken, type TestEmulator, unique } from '../helpers/emulator.js';

export const SECRET = 'sk_live_51HqJ2-9aB7/cD+e';
export const CARD = '4000056655665556';
export const TEST_CARD = '4242424242424242';

/** A reactor's module around `body` (given `args` and `req`). */
export const reactorCode = (body: string) =>
  `module.exports = async function (req) { const args = req.args; ${body} };`;

/**
 * Reactor code that sends one https request and resolves with its status (or the error's message):
 * `send({ path, method, headers, writes, host })`, `writes` the body's pieces (each a write).
 */
export const SEND = [
  "const https = require('https');",
  'function send(o) { return new Promise((resolve) => {',
  "  const r = https.request({ hostname: o.host || '127.0.0.1', port: Number(req.configuration.port), path: o.path || '/', method: o.method || 'POST', headers: o.headers || {}, ca: req.configuration.ca }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });",
  "  r.on('error', (e) => resolve('error: ' + e.message));",
  '  const writes = [...(o.writes || [])];',
  // Each piece in a turn of its own (a timer apart): the body streams out, not in one message.
  '  const next = () => { const w = writes.shift(); if (w === undefined) return r.end(); r.write(w); setTimeout(next, 15); };',
  '  next();',
  '}); }',
].join('\n');

export interface Received {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A loopback https destination for the whole file: what it received, in order. */
export async function httpsSink(): Promise<{ port: number; ca: string; received: Received[] }> {
  const { key, cert } = certificate();
  const received: Received[] = [];
  const server: Server = createHttpsServer({ key, cert }, (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      received.push({ url: request.url ?? '', headers: request.headers, body });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, ca: cert, received };
}

/** Creates a reactor of `code` (its configuration given) and invokes it with the secret's and card's tokens. */
export async function reactWith(
  emu: TestEmulator,
  code: string,
  configuration: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) {
  const secret = (await createToken(emu, { type: 'token', data: SECRET })).id;
  const card = (await createToken(emu, { type: 'token', data: CARD })).id;
  const reactor = await emu.call('POST', '/reactors', {
    body: { name: unique('leaky'), code: reactorCode(code), configuration },
  });
  expect(reactor.status, reactor.text).toBe(201);
  const answer = await emu.call('POST', `/reactors/${reactor.body.id}/react`, {
    key: emu.privateKey,
    body: { args: { secret: `{{ ${secret} }}`, card: `{{ ${card} }}` }, ...extra },
  });
  return { answer, traceId: String(answer.headers['svc-trace-id'] ?? ''), secret, card, reactorId: reactor.body.id };
}

export const leaksOf = (events: EmulatorEvent[], traceId: string) =>
  events.filter((event) => event.type === 'leak' && event.traceId === traceId);

let made: { key: Buffer; cert: string } | undefined;

/** A self-signed certificate for 127.0.0.1, made once per file (helpers/tls.ts's needs a test around it; this is for beforeAll). */
function certificate(): { key: Buffer; cert: string } {
  if (made) return made;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-leaks-tls-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key].concat([
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ]),
      { stdio: 'ignore' },
    );
    made = { key: readFileSync(key), cert: readFileSync(cert, 'utf8') };
    return made;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
