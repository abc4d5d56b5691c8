import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { EmulatorEvent } from '../../src/api/events.js';
import { Cipher } from '../../src/emulator/crypto/cipher.js';
import { TenantEventLog } from '../../src/emulator/event-log.js';
import { EventHub } from '../../src/emulator/events.js';
import { OutboundGateway } from '../../src/emulator/outbound/index.js';
import { ProxyPipeline } from '../../src/emulator/proxy/pipeline.js';
import { Runtime } from '../../src/emulator/runtime/index.js';
import { createServices } from '../../src/emulator/services/index.js';
import { Store } from '../../src/emulator/store/store.js';
import type { TestEmulator } from './emulator.js';

/** Creates a reactor with `key` (201 expected); resolves to its id. */
export async function createReactor(emu: TestEmulator, key: string, name: string, code: string): Promise<string> {
  const created = await emu.call('POST', '/reactors', { key, body: { name, code, configuration: {} } });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
}

/** The `data:` events of a whole (non-follow) answer of `GET /_emulator/events`. */
export function parseEvents(text: string): EmulatorEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)) as EmulatorEvent);
}

/**
 * What the emulator's HTTP server is built over, in memory, with its event log in reach (for its
 * `following` count). `close` ends the log, the runtime and the store: after the server is closed.
 */
export async function emulatorParts() {
  const store = await Store.open({ inMemory: true });
  const runtime = new Runtime();
  const hub = new EventHub();
  const services = createServices(store, { cipher: new Cipher(randomBytes(32)), runtime, emit: hub.publish });
  const gateway = new OutboundGateway();
  const pipeline = new ProxyPipeline({ ...services, tier: 'enterprise', emit: hub.publish, gateway });
  const eventLog = new TenantEventLog(hub);
  const close = async () => {
    eventLog.close();
    await runtime.dispose();
    await gateway.close();
    await store.close();
  };
  return { hub, services, pipeline, eventLog, close };
}
