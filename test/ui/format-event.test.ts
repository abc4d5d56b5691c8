import { describe, expect, test } from 'vitest';
import { formatEvent, formatNote, maskKey, type EventLine } from '../../src/ui/format-event.js';
import type { ServeEvent } from '../../src/ui/serve-types.js';

const TIME = '2025-01-02T03:04:05.678Z';
const text = (line: EventLine) => `${line.time} ${line.spans.map((span) => span.text).join(' ')}`;
const request = (extra: Record<string, unknown> = {}) =>
  ({
    type: 'request',
    tenantId: 't',
    method: 'POST',
    path: '/proxy',
    status: 502,
    ms: 7,
    traceId: 't',
    time: TIME,
    ...extra,
  }) as ServeEvent;

describe('formatEvent', () => {
  test('a request: method, path, status (toned by class), latency', () => {
    const line = formatEvent(request());
    expect(text(line)).toBe('03:04:05 POST /proxy 502 7ms');
    expect(line.spans[2]).toEqual({ text: '502', tone: 'fail' });
    expect(formatEvent(request({ status: 404 })).spans[2]?.tone).toBe('warn');
    expect(formatEvent(request({ status: 201 })).spans[2]?.tone).toBe('ok');
  });

  test('the number of tokens detokenized, when the event carries it; nothing for zero or a non-count', () => {
    expect(text(formatEvent(request({ detokenized: 1 })))).toBe('03:04:05 POST /proxy 502 7ms 1 token detokenized');
    expect(text(formatEvent(request({ detokenized: 12 })))).toMatch(/12 tokens detokenized$/);
    expect(text(formatEvent(request({ detokenized: 0 })))).toBe('03:04:05 POST /proxy 502 7ms');
    expect(text(formatEvent(request({ detokenized: 'tok_secret' })))).not.toContain('tok_secret');
  });

  test('text user code wrote cannot draw on the terminal nor pass for an emulator line', () => {
    const line = formatEvent({
      type: 'console',
      tenantId: 't',
      source: 'charge',
      level: 'warn',
      text: 'a\u001b[2J\r\nb\r\tc',
      time: TIME,
    });
    expect(text(line)).toBe('03:04:05 [charge] a\\u001b[2J\n    b\\r\tc');
    expect(line.spans[1]?.tone).toBe('warn');
    const failed = formatEvent({
      type: 'invocation',
      tenantId: 't',
      kind: 'reactor',
      name: 'r',
      id: 'i',
      status: 500,
      ms: 1,
      requestId: 'q',
      error: 'x\u0007',
      stack: 'at r.js:1\nat r.js:2',
      time: TIME,
    });
    expect(text(failed)).toBe('03:04:05 reactor r 500 1ms [q] x\\u0007');
    expect(failed.detail).toBe('at r.js:1\n    at r.js:2');
  });

  test('reloads, warnings, errors, expiry and webhooks', () => {
    expect(
      text(formatEvent({ type: 'reload', target: 'reactor charge', file: 'c.js', ok: true, ms: 9, time: TIME })),
    ).toBe('03:04:05 reload reactor charge ok 9ms');
    expect(text(formatEvent({ type: 'warning', traceId: 't9', message: 'dropped', time: TIME }))).toBe(
      '03:04:05 warning [t9] dropped',
    );
    expect(text(formatEvent({ type: 'error', message: 'bad', time: TIME }))).toBe('03:04:05 error bad');
    expect(
      text(formatEvent({ type: 'expired', applications: 1, tokens: 2, transactions: 0, results: 1, time: TIME })),
    ).toBe('03:04:05 expired: 1 Application, 2 tokens, 0 transactions, 1 reactor result');
    const webhook = {
      type: 'webhook',
      tenantId: 't',
      reactorId: 'r',
      requestId: 'q',
      url: 'http://127.0.0.1:9/h',
      attempt: 6,
      ok: false,
      status: 500,
      time: TIME,
    } as const;
    expect(text(formatEvent({ ...webhook, delivery: 'failed' }))).toBe(
      '03:04:05 webhook http://127.0.0.1:9/h attempt 6: 500, delivery failed',
    );
    expect(text(formatEvent({ ...webhook, ok: true, status: 204, delivery: 'delivered' }))).toBe(
      '03:04:05 webhook http://127.0.0.1:9/h attempt 6: 204',
    );
  });

  test('notes of serve itself', () => {
    const line = formatNote({ level: 'error', text: 'svc.yaml:3 nope' }, () => new Date(TIME));
    expect(text(line)).toBe('03:04:05 svc.yaml:3 nope');
    expect(line.spans[0]?.tone).toBe('fail');
  });
});

describe('maskKey', () => {
  test('keeps the kind of a platform key and none of its secret part', () => {
    expect(maskKey('key_local_mgt_7uW4kE9nQ2rT5yX8zA3bC6')).toBe('key_local_mgt_••••••••');
    expect(maskKey('ci-management-key-01')).toBe('••••••••');
  });
});

describe('every part of a line is safe for a terminal', () => {
  /** A cleared screen, a window title, an OSC 8 hyperlink, a bell, a CR, a line separator, a right-to-left override. */
  const HOSTILE = 'x\u001b[2J\u001b]0;title\u0007\u001b]8;;https://evil.example\u001b\\\r\u2028\u202e';
  const ESCAPED = 'x\\u001b[2J\\u001b]0;title\\u0007\\u001b]8;;https://evil.example\\u001b\\\\r\\u2028\\u202e';
  const all = (line: EventLine) => `${text(line)}\n${line.detail ?? ''}`;
  const clean = (line: EventLine) =>
    expect(all(line)).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/);

  test('names, paths, messages, urls and stacks of every event', () => {
    const events = [
      request({ path: `/proxy/${HOSTILE}`, method: HOSTILE }),
      {
        type: 'invocation',
        tenantId: 't',
        kind: 'reactor',
        name: HOSTILE,
        id: 'i',
        status: 500,
        ms: 1,
        requestId: HOSTILE,
        error: HOSTILE,
        stack: `${HOSTILE}\n${HOSTILE}`,
        time: TIME,
      },
      {
        type: 'console',
        tenantId: 't',
        source: HOSTILE,
        level: 'log',
        text: `${HOSTILE}\n12:00:00 POST /admin 200`,
        time: TIME,
      },
      { type: 'reload', target: HOSTILE, file: 'f', ok: false, ms: 1, error: HOSTILE, time: TIME },
      { type: 'error', message: HOSTILE, stack: HOSTILE, time: TIME },
      { type: 'warning', message: HOSTILE, traceId: HOSTILE, time: TIME },
      {
        type: 'webhook',
        tenantId: 't',
        reactorId: 'r',
        requestId: 'q',
        url: HOSTILE,
        attempt: 1,
        ok: false,
        error: HOSTILE,
        delivery: 'pending',
        time: TIME,
      },
    ] as ServeEvent[];
    for (const event of events) {
      const line = formatEvent(event);
      clean(line);
      expect(all(line)).toContain(ESCAPED);
    }
    const console = formatEvent(events[2]!);
    expect(text(console).split('\n')[1]).toBe('    12:00:00 POST /admin 200');
  });

  test('a time or a status that is not what it should be (an event read from a server)', () => {
    const line = formatEvent(request({ time: HOSTILE, status: HOSTILE, ms: HOSTILE }));
    clean(line);
    expect(line.time).toBe(ESCAPED);
  });

  test('notes keep their lines, indented, each made safe', () => {
    const line = formatNote({ level: 'error', text: `Re-apply failed: ${HOSTILE}\nline two` }, () => new Date(TIME));
    expect(text(line)).toBe(`03:04:05 Re-apply failed: ${ESCAPED}\n    line two`);
  });
});
