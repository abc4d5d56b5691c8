import { describe, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// `.invalid` never resolves (RFC 2606): the lookup fails at once, with or without a network.
const REMOTE = 'https://api.svc-test.invalid';

describe('a target that cannot be reached', () => {
  test('the hint names where its URL came from: a profile, SVC_BASE_URL or --base-url', async () => {
    const cwd = await tempDir();
    await runSvc(['profiles', 'add', 'remote', '--base-url', REMOTE, '--management-key', 'key_remote_mgt_0123456789'], {
      cwd,
    });
    await runSvc(['profiles', 'use', 'remote'], { cwd });
    expectOneLineError(
      await runSvc(['applications', 'list'], { cwd }),
      1,
      /^Error: Cannot reach https:\/\/api\.svc-test\.invalid: .*\. Check the base URL of profile "remote" \(svc profiles list\) and your network\.$/,
    );
    const env = { SVC_BASE_URL: REMOTE, SVC_MANAGEMENT_KEY: 'key_remote_mgt_0123456789' };
    expectOneLineError(
      await runSvc(['applications', 'list'], { cwd, env }),
      1,
      /^Error: Cannot reach .*\. Check SVC_BASE_URL and your network\.$/,
    );
    expectOneLineError(
      await runSvc(['applications', 'list', '--base-url', REMOTE, '--management-key', 'key_remote_mgt_0123456789'], {
        cwd,
      }),
      1,
      /^Error: Cannot reach .*\. Check --base-url and your network\.$/,
    );
  });
});
