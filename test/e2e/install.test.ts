import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, onTestFinished, test } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the install story', () => {
  test('the package is private, so npm never resolves `svc` to the public package of that name', async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', `file://${root}`), 'utf8')) as { private?: boolean };
    expect(pkg.private).toBe(true);
  });

  test("the README's first command starts the emulator: `npm start` is `svc serve`", async () => {
    const readme = await readFile(new URL('README.md', `file://${root}`), 'utf8');
    expect(readme).toContain('```sh\nnpm ci && npm start\n```');
    const child = spawn('npm', ['start', '--silent', '--', '--port', '0', '--in-memory', '--log-format', 'json'], {
      cwd: root,
      env: { ...process.env, CI: '1' },
      detached: true,
    });
    // npm runs svc in a shell of its own: stop the whole process group, not only npm.
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {}
    };
    onTestFinished(() => stop('SIGKILL'));
    const first = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`npm start exited with ${code}`)));
    });
    expect(JSON.parse(first)).toMatchObject({
      event: 'listening',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    stop('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  });
});
