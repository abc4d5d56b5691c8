/**
 * What a recording knows of each exchange's plaintext comes with the request (its provenance): the
 * call's detokenized values and its code's configuration, for user code's https requests as for a
 * proxy's forward, whatever the leak guard's mode.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type Svc } from '../../src/testing/index.js';
import { bodyOf, httpsDestination } from '../emulator/outbound/destination.js';
import { tempDir } from '../helpers/temp.js';

const PROJECT = fileURLToPath(new URL('./fixture/svc.yaml', import.meta.url));
const SIGNING_KEY = 'whsec_reactor_signing_key_456';
const NAME = 'Jane Q. Public';
const ACCENTED = 'Zoë Müller-Ångström';

async function cassettesOf(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.json') && !file.startsWith('.'));
  const texts = await Promise.all(files.map((file) => readFile(path.join(dir, file), 'utf8')));
  return texts.join('\n');
}

/** A destination that echoes everything it got: the plaintext comes back in the answer too. */
async function echo(request: http.IncomingMessage, response: http.ServerResponse) {
  const body = (await bodyOf(request)).toString();
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ url: request.url, signature: request.headers['x-signature'] ?? null, body }));
}

for (const leakGuard of ['warn', 'off'] as const)
  describe(`recording with the leak guard ${leakGuard}`, () => {
    let svc: Svc;
    let destination: http.Server;

    beforeAll(async () => {
      destination = http.createServer((request, response) => void echo(request, response));
      await new Promise<void>((resolve) => destination.listen(0, '127.0.0.1', resolve));
      process.env.SVC_RECORDING_DESTINATION = `http://127.0.0.1:${(destination.address() as AddressInfo).port}`;
      svc = await startSvc({ config: PROJECT, leakGuard });
    });

    afterAll(async () => {
      await svc?.stop();
      destination?.closeAllConnections();
      destination?.close();
    });

    it("a reactor's configuration values sent in a header, the query and the body are masked", async () => {
      const api = await httpsDestination((request, response) => void echo(request, response));
      const t = await svc.tenant();
      const dir = await tempDir();
      const recording = await t.destinations.record(dir);
      const answer = await t.reactors.invoke('signed', { url: `${api.url}/v1/hooks`, body: { n: 1 }, ca: api.ca });
      expect((answer.body as any).raw.status, JSON.stringify(answer.body)).toBe(200);
      await recording.stop();
      const text = await cassettesOf(dir);
      expect(text).toContain('/v1/hooks');
      expect(text).not.toContain(SIGNING_KEY);
      expect(text).toContain('[configuration]');
      await t.dispose();
    });

    it('a destination that answers gzip, echoing the value as Python writes JSON: neither form reaches the disk', async () => {
      const api = await httpsDestination(async (request, response) => {
        const sent = JSON.parse((await bodyOf(request)).toString());
        const python = JSON.stringify({ got: sent.card }).replace(
          /[^\x20-\x7e]/g,
          (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
        response.setHeader('content-type', 'application/json');
        response.setHeader('content-encoding', 'gzip');
        response.end(gzipSync(python));
      });
      const t = await svc.tenant();
      const name = await t.client.tokens.create({ type: 'token', data: ACCENTED });
      const dir = await tempDir();
      const recording = await t.destinations.record(dir);
      const answer = await t.reactors.invoke('pay', {
        url: `${api.url}/v1/pay`,
        body: { n: 1, card: `{{ ${name.id} }}` },
        ca: api.ca,
      });
      expect((answer.body as any).raw.status, JSON.stringify(answer.body)).toBe(200);
      await recording.stop();
      const text = await cassettesOf(dir);
      const cassette = JSON.parse(text);
      expect(cassette.exchanges[0].answer.body).toBe(`{"got":"{{ ${name.id} }}"}`);
      expect(text).not.toMatch(/Mu|M\\u00fc|bodyBase64/);
      await t.dispose();
    });

    it("a token's value (not a card number) a proxy and a reactor send never reaches the disk", async () => {
      const api = await httpsDestination((request, response) => void echo(request, response));
      const t = await svc.tenant();
      const name = await t.client.tokens.create({ type: 'token', data: NAME });
      const dir = await tempDir();
      const recording = await t.destinations.record(dir);
      const proxied = await t.proxies.invoke('charges', {
        method: 'POST',
        path: '/v1/charges',
        body: { amount: 1, card: `{{ ${name.id} }}` },
      });
      expect(proxied.status, JSON.stringify(proxied.body)).toBe(200);
      const reacted = await t.reactors.invoke('pay', {
        url: `${api.url}/v1/pay`,
        body: { n: 1, card: `{{ ${name.id} }}` },
        ca: api.ca,
      });
      expect((reacted.body as any).raw.status, JSON.stringify(reacted.body)).toBe(200);
      await recording.stop();
      const text = await cassettesOf(dir);
      expect(text).toContain('/v1/pay');
      expect(text).toContain('/v1/charges');
      expect(text.toLowerCase()).not.toContain('jane');
      expect(text).toContain(`{{ ${name.id} }}`);
      await t.dispose();
    });
  });
