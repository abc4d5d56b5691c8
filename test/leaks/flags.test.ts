import { describe, expect, it } from 'vitest';
import { leakOptions } from '../../src/cli/serve/leak-flags.js';
import { LeakGuard } from '../../src/emulator/leaks/guard.js';
import { inFlags } from '../../src/cli/serve/log.js';
import { createEmulator, EmulatorError, type EmulatorOptions } from '../../src/emulator/index.js';
import { runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** svc serve's leak guard flags: parsed, and the emulator's refusals of its options named by them. */
describe('svc serve --leak-guard flags', () => {
  it.each([
    [{ leakGuard: 'loud' }, /^--leak-guard must be one of warn, fail, off\./],
    [{ leakGuardAllow: ['1234'] }, /^--leak-guard-allow must be card numbers/],
    [{ leakGuardAllowHosts: ['https://pay.example/v1'] }, /^--leak-guard-allow-host must be host names/],
  ])('%j is refused in the words of its flag', async (options, wording) => {
    const emulator = createEmulator({ inMemory: true, port: 0, ...(options as EmulatorOptions) });
    const error = await emulator.ready.then(
      () => undefined,
      (refused: unknown) => refused,
    );
    expect(error).toBeInstanceOf(EmulatorError);
    expect(inFlags(error as EmulatorError)).toMatch(wording);
  });

  it('takes --leak-guard-allow-host repeated and as a comma list', () => {
    expect(
      leakOptions({ leakGuard: 'fail', leakGuardAllowHost: ['api.stripe.com, *.adyen.com', 'pay.example:8443'] }),
    ).toEqual({ leakGuard: 'fail', leakGuardAllowHosts: ['api.stripe.com', '*.adyen.com', 'pay.example:8443'] });
    expect(leakOptions({})).toEqual({});
  });

  it('refuses a host that is a URL, in one line before anything starts', async () => {
    const cwd = await tempDir();
    const result = await runSvc(['serve', '--port', '0', '--leak-guard-allow-host', 'https://api.stripe.com/v1'], {
      cwd,
      signal: AbortSignal.timeout(5000),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'Error: --leak-guard-allow-host takes a host name (api.example.com, or *.example.com for any host below it), not "https://api.stripe.com/v1".\n',
    );
  });
});

describe('LeakGuard.allowsHost', () => {
  const guard = new LeakGuard('warn', [], () => {}, ['*.example.com', 'pay.test:8443', 'API.Stripe.com']);
  it.each([
    ['https://a.example.com/x', true],
    ['https://a.b.example.com', true],
    ['https://example.com', false],
    ['https://evilexample.com', false],
    ['https://example.com.evil.test', false],
    ['https://pay.test:8443/charge', true],
    ['https://pay.test/charge', false],
    ['https://api.stripe.com/v1', true],
  ])('%s: %s', (url, allowed) => {
    expect(guard.allowsHost(new URL(url))).toBe(allowed);
  });
});
