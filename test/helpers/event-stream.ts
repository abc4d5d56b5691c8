import { expect } from 'vitest';
import type { EmulatorEvent } from '../../src/api/events.js';
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
