/**
 * User code's TLS material (key, cert, ca, passphrase) is parsed off the emulator's thread, within a
 * time budget; material that failed or ran out of time is refused at once when given again.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTenant, http, sharedEmulator, unique } from '../../helpers/emulator.js';
import { selfSigned } from '../../helpers/tls.js';
import { httpsDestination } from './destination.js';

const emulator = sharedEmulator();

/** One DER element at `at`: its tag and where its content starts and ends. */
function element(der: Buffer, at: number): { tag: number; start: number; end: number } {
  let length = der[at + 1]!;
  let head = 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    length = 0;
    for (let i = 0; i < bytes; i++) length = length * 256 + der[at + 2 + i]!;
    head += bytes;
  }
  return { tag: der[at]!, start: at + head, end: at + head + length };
}

function encoded(tag: number, content: Buffer): Buffer {
  const length = [];
  for (let n = content.length; n > 0; n = Math.floor(n / 256)) length.unshift(n & 0xff);
  const head = content.length < 128 ? [content.length] : [0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from([tag, ...head]), content]);
}

/** `der` with every INTEGER 2048 (the PBKDF2 count Node's export writes) made `count`, lengths redone. */
function withCount(der: Buffer, at: number, count: number): Buffer {
  const { tag, start, end } = element(der, at);
  const content = der.subarray(start, end);
  if (tag === 0x02 && content.equals(Buffer.from([0x08, 0x00]))) {
    const bytes = [];
    for (let n = count; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
    if (bytes[0]! & 0x80) bytes.unshift(0);
    return encoded(0x02, Buffer.from(bytes));
  }
  if (!(tag & 0x20)) return der.subarray(at, end);
  const parts = [];
  for (let next = start; next < end; next = element(der, next).end) parts.push(withCount(der, next, count));
  return encoded(tag, Buffer.concat(parts));
}

/** An encrypted PKCS#8 key (about 400 bytes) whose PBES2 parameters ask for `count` PBKDF2 iterations. */
function encryptedKey(count: number, passphrase: string): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase }) as string;
  const der = withCount(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'), 0, count);
  const lines = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${lines}\n-----END ENCRYPTED PRIVATE KEY-----\n`;
}

/** A reactor of a tenant of its own (a tenant's TLS budget and refusals are its own): calls it with `args`. */
async function reactor(code: string): Promise<(args: unknown) => Promise<any>> {
  const emu = emulator();
  const tenant = await createTenant(emu, unique('tenant'));
  const body = { name: unique('tls'), code, configuration: {} };
  const created = await emu.call('POST', '/reactors', { key: tenant.management_key, body });
  expect(created.status, created.text).toBe(201);
  return async (args) => {
    const answer = await emu.call('POST', `/reactors/${created.body.id}/react`, {
      key: tenant.private_key,
      body: { args },
    });
    expect(answer.status, answer.text).toBe(200);
    return answer.body.raw;
  };
}

/** User code's side: each request's outcome, in the order they settled. */
const SEND = `const https = require('https');
  const settled = [];
  const send = (label, options) => new Promise((resolve) => {
    const r = https.get(options, (res) => { res.resume(); settled.push(label); resolve(label + ' ' + res.statusCode); });
    r.on('error', (e) => { settled.push(label); resolve(label + ' ' + e.code + ': ' + e.message); });
  });`;

describe('TLS material of user code is parsed off the emulator’s thread', () => {
  it('a key whose PBKDF2 count is 2^31-1 holds nothing: /health answers meanwhile; it fails, then is refused at once', async () => {
    const emu = emulator();
    const key = encryptedKey(2 ** 31 - 1, 'pass');
    let health = 0;
    const destination = await httpsDestination(async (request, response) => {
      // Reached while the key is being parsed (the call's other request): the emulator answers.
      if (request.url === '/during') health = (await http(`${emu.url}/health`, 'GET', { key: null })).status;
      response.end('ok');
    });
    const react = await reactor(
      `${SEND}
      module.exports = async (req) => {
        const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca };
        // The destination's CA parsed first: the request during the key's parse needs no parse of its own.
        await send('warm', { ...base, path: '/warm' });
        const slow = send('slow', { ...base, path: '/slow', key: req.args.key, passphrase: 'pass' });
        const during = send('during', { ...base, path: '/during' });
        const outcomes = await Promise.all([slow, during]);
        const again = await send('again', { ...base, path: '/again', key: req.args.key, passphrase: 'pass' });
        return { raw: { settled, outcomes, again } };
      };`,
    );
    const raw = await react({ port: destination.port, ca: destination.ca, key });
    expect(health).toBe(200);
    // The other request answered (after /health did) before the key's parse ended.
    expect(raw.settled).toEqual(['warm', 'during', 'slow', 'again']);
    expect(raw.outcomes[0]).toMatch(/^slow ERR_SVC_TLS_TIMEOUT: .*took longer than/);
    expect(raw.outcomes[1]).toBe('during 200');
    expect(raw.again).toMatch(/^again ERR_SVC_TLS_REFUSED: .*took longer than/);
  });

  it('an encrypted client key is decrypted and presented; a wrong passphrase fails, and again at once', async () => {
    const { key, cert } = await selfSigned();
    const encrypted = createPrivateKey(key).export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase: 'right',
    }) as string;
    const presented: string[] = [];
    const server = https.createServer({ key, cert, requestCert: true, rejectUnauthorized: false }, (request, res) => {
      presented.push((request.socket as TLSSocket).getPeerCertificate().fingerprint256 ?? 'none');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      server.closeAllConnections();
      server.close();
    });
    const react = await reactor(
      `${SEND}
      module.exports = async (req) => {
        const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.cert, cert: req.args.cert, key: req.args.key };
        const outcomes = [];
        outcomes.push(await send('right', { ...base, path: '/', passphrase: 'right' }));
        outcomes.push(await send('wrong', { ...base, path: '/', passphrase: 'wrong' }));
        outcomes.push(await send('wrong again', { ...base, path: '/', passphrase: 'wrong' }));
        return { raw: outcomes };
      };`,
    );
    const port = (server.address() as AddressInfo).port;
    const outcomes = await react({ port, cert, key: encrypted });
    expect(outcomes[0]).toBe('right 200');
    expect(outcomes[1]).toMatch(/^wrong ERR_OSSL_BAD_DECRYPT: /);
    expect(outcomes[2]).toMatch(/^wrong again ERR_SVC_TLS_REFUSED: .*bad decrypt/);
    expect(presented).toHaveLength(1);
    expect(presented[0]).toMatch(/^[0-9A-F:]{95}$/);
  });
});

describe('a tenant cannot queue the parse process’s CPU', () => {
  it('distinct slow keys given at once: two are parsed, the rest refused at once (not 2 s of CPU each)', async () => {
    // Four keys of 2^31-1 iterations, each its own salt: four distinct sets of material.
    const keys = Array.from({ length: 4 }, () => encryptedKey(2 ** 31 - 1, 'pass'));
    const destination = await httpsDestination((_request, response) => response.end('ok'));
    const react = await reactor(
      `${SEND}
      module.exports = async (req) => {
        const base = { hostname: '127.0.0.1', port: req.args.port, ca: req.args.ca, passphrase: 'pass' };
        const outcomes = await Promise.all(req.args.keys.map((key, i) => send('k' + i, { ...base, path: '/', key })));
        return { raw: { outcomes } };
      };`,
    );
    const raw = await react({ port: destination.port, ca: destination.ca, keys });
    const codes = (raw.outcomes as string[]).map((outcome) => outcome.split(' ')[1]);
    // Before: all four queued, 8 s of one core's CPU spent on one call (a burst of 1 MB of such keys: 80 min).
    expect(codes.filter((code) => code === 'ERR_SVC_TLS_TIMEOUT:')).toHaveLength(2);
    expect(codes.filter((code) => code === 'ERR_SVC_TLS_BUSY:')).toHaveLength(2);
    expect(raw.outcomes.join('\n')).toMatch(/k\d ERR_SVC_TLS_BUSY: .*2 sets of TLS material .* at once/);
  });
});

describe('TLS material as Node takes it', () => {
  it('a ca given as a list of certificates trusts each of them, as Node does', async () => {
    const other = await selfSigned();
    const destination = await httpsDestination((_request, response) => response.end('ok'));
    const react = await reactor(
      `${SEND}
      module.exports = async (req) => {
        const base = { hostname: '127.0.0.1', port: req.args.port, path: '/' };
        const listed = await send('listed', { ...base, ca: [req.args.other, req.args.ca] });
        const buffers = await send('buffers', { ...base, ca: [Buffer.from(req.args.other), Buffer.from(req.args.ca)] });
        return { raw: { listed, buffers } };
      };`,
    );
    const raw = await react({ port: destination.port, ca: destination.ca, other: other.cert });
    expect(raw.listed).toBe('listed 200');
    expect(raw.buffers).toBe('buffers 200');
  });
});
