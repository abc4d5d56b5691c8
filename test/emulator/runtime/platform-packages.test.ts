/**
 * The platform's npm packages (protocol.ts PLATFORM_NPM_PACKAGES, installed here as devDependencies
 * at the documented major) load from the project's node_modules inside a compartment and do their
 * usual job: one typical call each. HTTP clients go out through the outbound gateway to a real
 * plain-http server on loopback. Needs the build (`npm run build`).
 */
import { createHash, createHmac, generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedRuntime, value } from './helpers.js';

const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const rt = sharedRuntime({ projectDir });

/** A loopback destination that answers each request with what it received, as JSON (gzipped when asked). */
let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const echo = JSON.stringify({
      method: request.method,
      url: request.url,
      header: request.headers['x-test'] ?? null,
      body: Buffer.concat(chunks).toString(),
    });
    if (request.url === '/gzip') {
      const { gzipSync } = await import('node:zlib');
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(gzipSync(echo));
      return;
    }
    if (request.url === '/missing') {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'not here' }));
      return;
    }
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(echo);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const call = (code: string, args: unknown = { base }) =>
  value(rt(), code, { args }, { timeoutMs: 15_000 }) as Promise<Record<string, unknown>>;

describe('HTTP clients reach plain-http destinations through the gateway', () => {
  it('axios 0.27 posts JSON, reads a gzipped answer and rejects a 404 with its status', async () => {
    expect(
      await call(`const axios = require('axios');
        module.exports = async (req) => {
          const posted = await axios.post(req.args.base + '/orders?x=1', { amount: 5 }, { headers: { 'x-test': 'yes' } });
          const gzipped = await axios.get(req.args.base + '/gzip');
          const missing = await axios.get(req.args.base + '/missing').catch((e) => ({ status: e.response.status, data: e.response.data }));
          return { status: posted.status, posted: posted.data, gzipped: gzipped.data.url, missing };
        };`),
    ).toEqual({
      status: 201,
      posted: { method: 'POST', url: '/orders?x=1', header: 'yes', body: '{"amount":5}' },
      gzipped: '/gzip',
      missing: { status: 404, data: { error: 'not here' } },
    });
  });

  it('node-fetch 2 sends a body and headers and reads the answer as JSON and text', async () => {
    expect(
      await call(`const fetch = require('node-fetch');
        module.exports = async (req) => {
          const response = await fetch(req.args.base + '/charge', { method: 'PUT', body: 'a=1', headers: { 'x-test': 'nf' } });
          const gzipped = await fetch(req.args.base + '/gzip');
          return { status: response.status, ok: response.ok, statusText: response.statusText, json: await response.json(), gzipped: JSON.parse(await gzipped.text()).url };
        };`),
    ).toEqual({
      status: 201,
      ok: true,
      statusText: 'Created',
      json: { method: 'PUT', url: '/charge', header: 'nf', body: 'a=1' },
      gzipped: '/gzip',
    });
  });
});

describe('the rest of the list loads and works', () => {
  it('node-forge: HMAC-SHA256 and AES-CBC as Node computes them', async () => {
    const key = '0123456789abcdef';
    const outcome = await call(
      `const forge = require('node-forge');
       module.exports = async (req) => {
         const hmac = forge.hmac.create();
         hmac.start('sha256', 'secret');
         hmac.update('message');
         const cipher = forge.cipher.createCipher('AES-CBC', req.args.key);
         cipher.start({ iv: req.args.key });
         cipher.update(forge.util.createBuffer('4242424242424242'));
         cipher.finish();
         const decipher = forge.cipher.createDecipher('AES-CBC', req.args.key);
         decipher.start({ iv: req.args.key });
         decipher.update(cipher.output.copy());
         decipher.finish();
         return { hmac: hmac.digest().toHex(), sha1: forge.md.sha1.create().update('abc').digest().toHex(), round: decipher.output.toString(), random: forge.random.getBytesSync(8).length };
       };`,
      { key },
    );
    expect(outcome).toEqual({
      hmac: createHmac('sha256', 'secret').update('message').digest('hex'),
      sha1: createHash('sha1').update('abc').digest('hex'),
      round: '4242424242424242',
      random: 8,
    });
  });

  it('xmlbuilder2 builds a document and parses one back to an object', async () => {
    expect(
      await call(`const { create, convert } = require('xmlbuilder2');
        module.exports = async () => {
          const xml = create({ version: '1.0' }).ele('payment', { id: '7' }).ele('amount').txt('10.00').up().end();
          return { xml, parsed: create('<card><last4>4242</last4></card>').end({ format: 'object' }), json: convert('<a b="1"/>', { format: 'json' }) };
        };`),
    ).toEqual({
      xml: '<?xml version="1.0"?><payment id="7"><amount>10.00</amount></payment>',
      parsed: { card: { last4: '4242' } },
      json: '{"a":{"@b":"1"}}',
    });
  });

  it('crypto-js, uuid, json-stable-stringify, snakecase-keys, fast-xml-parser', async () => {
    expect(
      await call(`const CryptoJS = require('crypto-js');
        const { v4, validate } = require('uuid');
        const stringify = require('json-stable-stringify');
        const snakecaseKeys = require('snakecase-keys');
        const { XMLParser } = require('fast-xml-parser');
        module.exports = async () => ({
          sha: CryptoJS.SHA256('abc').toString(),
          aes: CryptoJS.AES.decrypt(CryptoJS.AES.encrypt('pan', 'k').toString(), 'k').toString(CryptoJS.enc.Utf8),
          uuid: validate(v4()),
          stable: stringify({ b: 1, a: [2, { d: 1, c: 0 }] }),
          snake: snakecaseKeys({ expiresAt: 1, nestedValue: { cardNumber: 2 } }),
          xml: new XMLParser().parse('<r><n>1</n></r>'),
        });`),
    ).toEqual({
      sha: createHash('sha256').update('abc').digest('hex'),
      aes: 'pan',
      uuid: true,
      stable: '{"a":[2,{"c":0,"d":1}],"b":1}',
      snake: { expires_at: 1, nested_value: { card_number: 2 } },
      xml: { r: { n: 1 } },
    });
  });

  it('yup validates, csv-parse parses, node-jose signs and verifies a JWS', async () => {
    expect(
      await call(`const yup = require('yup');
        const { parse } = require('csv-parse/sync');
        const jose = require('node-jose');
        module.exports = async () => {
          const schema = yup.object({ pan: yup.string().matches(/^[0-9]{16}$/).required() });
          const invalid = await schema.validate({ pan: 'x' }).catch((e) => e.name);
          const key = await jose.JWK.createKey('oct', 256, { alg: 'HS256' });
          const signed = await jose.JWS.createSign({ format: 'compact' }, key).update('payload').final();
          const verified = await jose.JWS.createVerify(key).verify(signed);
          return { valid: await schema.isValid({ pan: '4242424242424242' }), invalid, rows: parse('a,b\\n1,2', { columns: true }), jws: verified.payload.toString() };
        };`),
    ).toEqual({ valid: true, invalid: 'ValidationError', rows: [{ a: '1', b: '2' }], jws: 'payload' });
  });

  it('openpgp encrypts and decrypts, pdf-lib writes and reads a PDF, mastercard-oauth1-signer signs', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const outcome = await call(
      `const openpgp = require('openpgp');
       const { PDFDocument } = require('pdf-lib');
       const oauth = require('mastercard-oauth1-signer');
       module.exports = async (req) => {
         const { privateKey, publicKey } = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519', userIDs: [{ name: 'svc' }], format: 'armored' });
         const encrypted = await openpgp.encrypt({ message: await openpgp.createMessage({ text: 'secret pan' }), encryptionKeys: await openpgp.readKey({ armoredKey: publicKey }) });
         const { data } = await openpgp.decrypt({ message: await openpgp.readMessage({ armoredMessage: encrypted }), decryptionKeys: await openpgp.readPrivateKey({ armoredKey: privateKey }) });
         const pdf = await PDFDocument.create();
         pdf.addPage().drawText('receipt');
         const bytes = await pdf.save();
         const header = oauth.getAuthorizationHeader('https://api.example.com/x?a=1', 'POST', '{"b":2}', 'consumer-key', req.args.key);
         return {
           pgp: [encrypted.startsWith('-----BEGIN PGP MESSAGE-----'), data],
           pdf: [String.fromCharCode(...bytes.slice(0, 5)), (await PDFDocument.load(bytes)).getPageCount()],
           oauth: [header.startsWith('OAuth '), /oauth_consumer_key="consumer-key"/.test(header), /oauth_signature_method="RSA-SHA256"/.test(header),
             Buffer.from(decodeURIComponent(/oauth_signature="([^"]+)"/.exec(header)[1]), 'base64').length],
         };
       };`,
      { key: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
    );
    expect(outcome).toEqual({ pgp: [true, 'secret pan'], pdf: ['%PDF-', 1], oauth: [true, true, true, 256] });
  });
});
