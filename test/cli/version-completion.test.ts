import { APPLICATION_TYPES } from '../../src/api/permissions.js';
import { TOKEN_TYPES } from '../../src/api/types.js';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { packageVersion } from '../../src/lib/package-version.js';
import { expectOneLineError, runSvc } from '../helpers/cli.js';
import { startEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/temp.js';

describe('svc version', () => {
  test('--json: svc, node and the server version from /health', async () => {
    const emu = await startEmulator({ inMemory: true });
    const result = await runSvc(['version', '--json', '--base-url', emu.url], { cwd: emu.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json()).toEqual({
      svc: packageVersion(),
      node: process.version,
      server: { url: emu.url, reachable: true, version: packageVersion() },
    });
  });

  test('a server that does not answer is reported, and the command still succeeds', async () => {
    const cwd = await tempDir();
    const result = await runSvc(['version', '--base-url', 'http://127.0.0.1:9'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`svc     ${packageVersion()}`);
    expect(result.stdout).toMatch(/^server {2}not reachable \(.+\) at http:\/\/127\.0\.0\.1:9$/m);
  });
});

/** Sources the bash script and asks it to complete `line` (the cursor at its end). */
function completeInBash(script: string, line: string): string[] {
  const words = line.split(' ');
  const program = `source "$1"; COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _svc_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = spawnSync('bash', ['-c', program, 'bash', script], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  return run.stdout.split('\n').filter(Boolean);
}

describe('svc completion', () => {
  test('bash completes nouns, verbs, flags and choices, skipping flag values', async () => {
    const cwd = await tempDir();
    const result = await runSvc(['completion', 'bash'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(cwd, 'svc.bash');
    await writeFile(file, result.stdout);
    expect(completeInBash(file, 'svc applic')).toEqual(['applications']);
    expect(completeInBash(file, 'svc applications ')).toEqual(
      expect.arrayContaining(['list', 'create', 'delete', 'regenerate']),
    );
    expect(completeInBash(file, 'svc --base-url http://x applications li')).toEqual(['list']);
    expect(completeInBash(file, 'svc reactors list --na')).toEqual(['--name']);
    expect(completeInBash(file, 'svc serve --tier ')).toEqual(['enterprise', 'standard']);
    // A flag's choices are its command's (issue 31: --type offered token types everywhere).
    expect(completeInBash(file, 'svc applications create --type ')).toEqual([...APPLICATION_TYPES]);
    expect(completeInBash(file, 'svc tokens create --type ')).toEqual([...TOKEN_TYPES]);
  });

  test('zsh loads the same function through bashcompinit; fish gets one complete line per word', async () => {
    const cwd = await tempDir();
    const zsh = await runSvc(['completion', 'zsh'], { cwd });
    expect(zsh.stdout.split('\n')[0]).toBe('autoload -U +X bashcompinit && bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _svc_complete svc');
    const fish = await runSvc(['completion', 'fish'], { cwd });
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c svc -n '__fish_use_subcommand' -a 'applications'");
    expect(fish.stdout).toMatch(
      /complete -c svc -n '__fish_seen_subcommand_from applications apps?[^']*; and not __fish_seen_subcommand_from [^']*list[^']*' -a 'list'/,
    );
    expect(fish.stdout).toMatch(
      /complete -c svc -n '[^']*__fish_seen_subcommand_from serve' -l tier -x -a 'enterprise standard'/,
    );
  });

  test('an unknown shell is a usage error', async () => {
    const cwd = await tempDir();
    expectOneLineError(await runSvc(['completion', 'powershell'], { cwd }), 2, /bash, zsh, fish/);
  });
});
