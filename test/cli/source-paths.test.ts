import { describe, expect, test } from 'vitest';
import { SourcePaths } from '../../src/cli/serve/source-paths.js';

const TIME = '2030-01-02T03:04:05.678Z';
const desired = {
  dir: '/project',
  reactors: [
    { name: 'charge', code: { path: 'reactors/charge.js' } },
    { name: 'Send Mail!', code: { path: 'mail/index.js' } },
  ],
  proxies: [{ name: 'echo', request_transform: { path: 'bad.js' }, response_transform: null }],
};

describe("serve's code places in the user's files", () => {
  const sources = new SourcePaths('/project');
  sources.update(desired);

  test('a place in a server file name is said in the file svc.yaml names, relative to the folder', () => {
    expect(sources.localize('Error: x\n    at module.exports (charge.js:2:9)')).toBe(
      'Error: x\n    at module.exports (reactors/charge.js:2:9)',
    );
    expect(sources.localize('echo-request-transform.js:2:9 boom')).toBe('bad.js:2:9 boom');
    expect(sources.localize('at Send-Mail.js:1:1')).toBe('at mail/index.js:1:1');
  });

  test('a longer name, a name with no place and an unknown file stay as they are', () => {
    for (const text of ['recharge.js:2:9', 'charge.js is fine', 'other.js:1:1', 'my-charge.js:3:1'])
      expect(sources.localize(text)).toBe(text);
  });

  test('an event is copied with its message and stack localized; one with nothing to change is the same object', () => {
    const event = { time: TIME, type: 'error' as const, message: 'charge.js:4:1 bad', stack: 'at charge.js:4:1' };
    expect(sources.localizeEvent(event)).toEqual({
      time: TIME,
      type: 'error',
      message: 'reactors/charge.js:4:1 bad',
      stack: 'at reactors/charge.js:4:1',
    });
    expect(event.message).toBe('charge.js:4:1 bad');
    const plain = { time: TIME, type: 'warning' as const, message: 'nothing here' };
    expect(sources.localizeEvent(plain)).toBe(plain);
  });

  test('the debugger lookup names absolute files, and a later apply replaces what an earlier one named', () => {
    expect(sources.lookup('reactor', 'charge')).toBe('/project/reactors/charge.js');
    expect(sources.lookup('transform', 'echo', 'request')).toBe('/project/bad.js');
    const later = new SourcePaths('/project');
    later.update(desired);
    later.update({ dir: '/project', reactors: [], proxies: [] });
    expect(later.lookup('reactor', 'charge')).toBeUndefined();
    expect(later.localize('charge.js:2:9')).toBe('charge.js:2:9');
  });
});
