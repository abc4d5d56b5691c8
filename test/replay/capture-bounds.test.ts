/**
 * What `svc replay`'s capture holds of a call under way: at most the 64 KB of each body it keeps,
 * whatever the call sent (a 4.5 MB upload held whole, twice, until the answer's body ended).
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OutboundRequest } from '../../src/emulator/outbound/types.js';
import type { ProxyCall } from '../../src/emulator/proxy/pipeline.js';
import { CallCapture } from '../../src/emulator/replay/capture.js';
import { KEPT_BODY_BYTES } from '../../src/emulator/replay/redact.js';
import type { KeptCall } from '../../src/emulator/replay/types.js';
import type { ProxyRecord } from '../../src/emulator/store/records.js';

const UPLOAD = Buffer.alloc(1024 * 1024, 'b');

describe("svc replay's capture of a large upload", () => {
  it('holds at most 64 KB of each body while the answer streams, and keeps the call as cut', async () => {
    const kept: KeptCall[] = [];
    const capture = new CallCapture((call) => kept.push(call));
    const call = {
      method: 'POST',
      suffix: '/up',
      query: '',
      rawHeaders: [],
      body: UPLOAD,
      traceId: 'trace-1',
    } as unknown as ProxyCall;
    const proxy = { tenant_id: 't', id: 'p', name: 'p' } as ProxyRecord;
    capture.proxy.began(call, proxy, undefined, { 'content-type': 'text/plain' });
    const request: OutboundRequest = {
      url: new URL('http://127.0.0.1:9/up'),
      method: 'POST',
      headers: {},
      body: UPLOAD,
    };
    const answerBody = new Readable({ read() {} });
    const origin = { tenantId: 't', kind: 'proxy' as const, id: 'p', name: 'p', traceId: 'trace-1' };
    const answer = await capture.interceptor(request, origin, async () => ({
      status: 200,
      headers: {},
      body: answerBody,
    }));
    capture.proxyEnded(call, () => ({ status: 200, headers: {}, body: undefined, fromDestination: true }));
    // The answer is still streaming: the call waits for it, holding only what it keeps.
    const pending = (
      capture as unknown as { pending: Map<string, { inbound: { body: string }; exchanges: { body: Buffer }[] }> }
    ).pending.get('trace-1')!;
    expect(pending.inbound.body.length).toBeLessThanOrEqual(KEPT_BODY_BYTES);
    expect(pending.exchanges[0]!.body.length).toBeLessThanOrEqual(KEPT_BODY_BYTES);
    answerBody.push('done');
    answerBody.push(null);
    await answer.body.toArray();
    await new Promise((resolve) => setImmediate(resolve));
    expect(kept).toHaveLength(1);
    const call0 = kept[0]!;
    expect(call0.kind === 'proxy' && call0.inbound.bodyCut).toBe(true);
  });
});
