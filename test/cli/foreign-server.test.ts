import { describe, expect, test } from 'vitest';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

/** A real loopback server that answers every request with `status`, `type` and `body`: not the svc API. */
async function foreignServer(status: number, type: string | undefined, body: string): Promise<string> {
  const server = await startReceiver(
    () => (response) => {
      response.writeHead(status, type === undefined ? {} : { 'content-type': type });
      response.end(body);
    },
    '',
  );
  return server.url;
}

const KEY = ['--management-key', 'key_local_mgt_0000000000000000000000'];

describe('a base URL that is not an svc server', () => {
  test.each([
    [
      'a web page (200, text/html)',
      200,
      'text/html; charset=utf-8',
      '<html><body>hello</body></html>',
      /HTTP 200, text\/html/,
    ],
    ['plain text (200)', 200, 'text/plain', 'status 200\n', /HTTP 200, text\/plain/],
    [
      'another JSON API (200, a different shape)',
      200,
      'application/json',
      '{"items":[]}',
      /HTTP 200, application\/json/,
    ],
    ['an error page (404, text/html)', 404, 'text/html', '<h1>Not Found</h1>', /HTTP 404, text\/html/],
    ['no content type (200)', 200, undefined, 'ok', /HTTP 200, no content type/],
  ])('%s: one line saying so, exit 1', async (_label, status, type, body, detail) => {
    const url = await foreignServer(status, type, body);
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--base-url', url, ...KEY], { cwd });
    expectOneLineError(
      result,
      1,
      new RegExp(`^Error: The server at ${url} did not answer like the svc API \\(.*\\)\\. Check --base-url`),
    );
    expect(result.stderr).toMatch(detail);
    expect(result.stderr).not.toContain('bug');
  });

  test('--json: nothing on stdout, the error as JSON on stderr, exit 1', async () => {
    const url = await foreignServer(200, 'text/plain', 'status 200\n');
    const cwd = await tempDir();
    const result = await runSvc(['applications', 'list', '--json', '--base-url', url, ...KEY], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr).error.detail).toMatch(/did not answer like the svc API \(HTTP 200, text\/plain\)/);
  });
});
