/**
 * Answers svc gives that the OpenAPI document must list (the helpers check every answer against it
 * and fail on one it does not describe): the 417 of an Expect svc cannot meet, on any operation, and
 * the 409 of /detokenize in a transaction that is no longer open.
 */
import { describe, expect, it } from 'vitest';
import { sharedEmulator } from '../../helpers/emulator.js';
import { checkAnswer } from '../../helpers/openapi-check.js';
import { rawConnection, rawRequest, type RawResponse } from '../../helpers/raw-http.js';

describe('the OpenAPI document lists what svc answers', () => {
  const emu = sharedEmulator();

  it('417 for an Expect other than 100-continue', async () => {
    for (const [method, path] of [
      ['GET', '/tokens'],
      ['POST', '/detokenize'],
    ] as const) {
      const connection = await rawConnection(emu().url);
      connection.send(
        rawRequest(emu().url, `${method} ${path} HTTP/1.1`, [
          `svc-api-key: ${emu().privateKey}`,
          'expect: x-something',
          'content-type: application/json',
          'content-length: 2',
        ]),
      );
      const answer = (await connection.next()) as RawResponse;
      expect(answer.status, answer.body).toBe(417);
      const mismatch = checkAnswer({
        method,
        url: emu().url + path,
        status: answer.status,
        contentType: answer.headers['content-type'],
        text: answer.body,
      });
      expect(mismatch).toBeUndefined();
    }
  });

  it('409 for /detokenize in a transaction that is not open', async () => {
    const opened = await emu().call('POST', '/transactions', { key: emu().privateKey });
    expect(opened.status, opened.text).toBe(201);
    const committed = await emu().call('POST', `/transactions/${opened.body.id}/commit`, { key: emu().privateKey });
    expect(committed.status, committed.text).toBeLessThan(300);
    const answer = await emu().call('POST', '/detokenize', {
      key: emu().privateKey,
      headers: { 'svc-transaction-id': opened.body.id },
      body: { a: 'b' },
    });
    expect(answer.status, answer.text).toBe(409);
  });
});
