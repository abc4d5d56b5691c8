import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, expect, onTestFinished } from 'vitest';
import { PROXY_DESTINATION_STATUS_HEADER } from '../../src/api/headers.js';
import {
  createEmulator,
  type Emulator,
  type EmulatorEvent,
  type EmulatorOptions,
  type EmulatorReady,
} from '../../src/emulator/index.js';
import { checkAnswer, checkAnswersOf, writeCheckReport } from './openapi-check.js';
import { tempDir } from './temp.js';

export interface HttpResult<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export interface CallOptions {
  /** The API key to send; `null` sends none. Defaults to the management key. */
  key?: string | null;
  body?: unknown;
  /** A raw body sent as is (with `contentType`). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface TestEmulator {
  emulator: Emulator;
  /** What the start brought up (the emulator's `await ready`). */
  started: EmulatorReady;
  url: string;
  dir: string;
  /** The data file, unless in memory. */
  data: string | undefined;
  managementKey: string;
  privateKey: string;
  tenantId: string;
  events: EmulatorEvent[];
  call<T = any>(method: string, path: string, options?: CallOptions): Promise<HttpResult<T>>;
  /** Stops it (idempotent); called when the test ends anyway. */
  dispose(): Promise<void>;
}

/** Sends one HTTP request to a real server and reads the whole answer. */
export async function http<T = any>(
  url: string,
  method: string,
  options: CallOptions & { key?: string | null } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['svc-api-key'] = options.key;
  let body: string | Buffer | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
    if (options.contentType) headers['content-type'] = options.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await request(url, { method: method as never, headers, body });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  const type = response.headers['content-type'];
  const mismatch = checkAnswer({
    method,
    url,
    status: response.statusCode,
    contentType: Array.isArray(type) ? type[0] : type,
    text,
    fromDestination: response.headers[PROXY_DESTINATION_STATUS_HEADER] !== undefined,
  });
  if (mismatch !== undefined) throw new Error(`The OpenAPI document does not describe this answer: ${mismatch}`);
  return { status: response.statusCode, headers: response.headers, body: parsed as T, text };
}

const fetchMismatches: string[] = [];
const CHECKED_FETCH = Symbol.for('svc.test.checked-fetch');

/**
 * The client's requests (global fetch, which ApiClient uses) checked too: each answer from an
 * emulator the helpers started is read from a clone (not an event stream) and checked; a mismatch
 * fails the test that made it, when it ends.
 */
function checkFetchAnswers(): void {
  const original = globalThis.fetch as typeof fetch & { [CHECKED_FETCH]?: true };
  if (original[CHECKED_FETCH]) return;
  const checked = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const response = await original(input, init);
    const type = response.headers.get('content-type') ?? undefined;
    if (!type?.startsWith('text/event-stream')) {
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      const text = await response
        .clone()
        .text()
        .catch(() => undefined);
      const url = input instanceof Request ? input.url : String(input);
      const fromDestination = response.headers.has(PROXY_DESTINATION_STATUS_HEADER);
      const mismatch = checkAnswer({ method, url, status: response.status, contentType: type, text, fromDestination });
      if (mismatch !== undefined) fetchMismatches.push(mismatch);
    }
    return response;
  };
  globalThis.fetch = Object.assign(checked, { [CHECKED_FETCH]: true as const });
}
checkFetchAnswers();

afterAll(writeCheckReport);

afterEach(() => {
  const found = fetchMismatches.splice(0);
  if (found.length > 0) throw new Error(`The OpenAPI document does not describe these answers:\n${found.join('\n')}`);
});

/**
 * Starts a real emulator on port 0 with its data in a fresh temp folder (or in memory), stopped
 * when the test ends.
 */
export async function startEmulator(options: EmulatorOptions & { dir?: string } = {}): Promise<TestEmulator> {
  const dir = options.dir ?? (await tempDir());
  const data = options.inMemory ? undefined : (options.data ?? path.join(dir, '.svc', 'data.json'));
  const events: EmulatorEvent[] = [];
  const emulator = createEmulator({
    port: 0,
    ...options,
    ...(data !== undefined && { data }),
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
    },
  });
  onTestFinished(() => emulator.dispose());
  const started = await emulator.ready;
  const { url } = started;
  checkAnswersOf(url);
  const { keys, tenantId } = started.bootstrap;
  const managementKey = keys.managementKey ?? options.managementKey;
  const privateKey = keys.privateKey ?? options.privateKey;
  return {
    emulator,
    started,
    url,
    dir,
    data,
    managementKey: managementKey!,
    privateKey: privateKey!,
    tenantId,
    events,
    call: (method, path, callOptions = {}) =>
      http(url + path, method, {
        ...callOptions,
        key: callOptions.key === undefined ? managementKey : callOptions.key,
      }),
    dispose: () => emulator.dispose(),
  };
}

/** Creates another tenant through the loopback admin route; returns its keys. */
export async function createTenant(emu: TestEmulator, name = 'other') {
  const result = await emu.call('POST', '/_emulator/tenants', { key: null, body: { name } });
  if (result.status !== 201) throw new Error(`tenant creation failed: ${result.text}`);
  return result.body as { id: string; management_key: string; private_key: string };
}

/**
 * One real emulator for a whole describe block (the helper's `startEmulator` stops its emulator
 * at the end of each test): started before the block's tests, stopped after them.
 */
export function sharedEmulator(options: EmulatorOptions = { inMemory: true }): () => TestEmulator {
  let emu: TestEmulator | undefined;
  let dispose: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const events: EmulatorEvent[] = [];
    const emulator = createEmulator({ port: 0, ...options, onEvent: (event) => events.push(event) });
    dispose = () => emulator.dispose();
    const started = await emulator.ready;
    const { keys, tenantId } = started.bootstrap;
    const { url } = started;
    checkAnswersOf(url);
    emu = {
      emulator,
      started,
      url,
      dir: '',
      data: undefined,
      managementKey: keys.managementKey!,
      privateKey: keys.privateKey!,
      tenantId,
      events,
      call: (method, path, callOptions = {}) =>
        http(url + path, method, {
          ...callOptions,
          key: callOptions.key === undefined ? keys.managementKey! : callOptions.key,
        }),
      dispose: () => emulator.dispose(),
    };
  });
  afterAll(async () => {
    await dispose?.();
  });
  return () => {
    if (!emu) throw new Error('the shared emulator has not started');
    return emu;
  };
}

/** A name no other test uses. */
export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** An Application of the bootstrap tenant, made with the management key (201 expected). */
export async function createApplication(
  emu: TestEmulator,
  body: Record<string, unknown>,
): Promise<{ id: string; key: string } & Record<string, any>> {
  const created = await emu.call('POST', '/applications', { body: { name: unique('app'), ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** A token made with `key` (the private key by default; 201 expected). */
export async function createToken(
  emu: TestEmulator,
  body: Record<string, unknown>,
  key = emu.privateKey,
): Promise<{ id: string } & Record<string, any>> {
  const created = await emu.call('POST', '/tokens', { key, body });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/**
 * One real emulator for a file, and for each test a tenant of its own forked from a template tenant
 * (`emulator.tenants.fork`, as svc/testing does): a fork's code runs in the template's sandbox
 * processes, so a test pays no emulator start and no sandbox boot. Call at file or describe level;
 * for tests that are not about process isolation or the bootstrap tenant. `events` are the fork's.
 */
export function forkedTenants(options: EmulatorOptions = { inMemory: true }): () => Promise<TestEmulator> {
  const shared = sharedEmulator(options);
  let templateId: string | undefined;
  beforeAll(async () => {
    templateId = (await shared().emulator.tenants.create({ name: unique('template') })).id;
  });
  return async () => {
    const emu = shared();
    if (templateId === undefined) throw new Error('forkedTenants() is only usable inside a test');
    const fork = await emu.emulator.tenants.fork(templateId, { name: unique('test') });
    const { management_key: managementKey, private_key: privateKey } = fork;
    return {
      ...emu,
      managementKey,
      privateKey,
      tenantId: fork.id,
      get events() {
        return emu.events.filter((event) => (event as { tenantId?: string }).tenantId === fork.id);
      },
      call: (method, path, callOptions = {}) =>
        http(emu.url + path, method, {
          ...callOptions,
          key: callOptions.key === undefined ? managementKey : callOptions.key,
        }),
    };
  };
}
