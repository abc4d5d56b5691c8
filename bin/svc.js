#!/usr/bin/env node
// The svc command: check the Node version, then load the built CLI.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 18)) {
  process.stderr.write(`svc needs Node.js 20.18 or newer; this is ${process.version}.\n`);
  process.exit(1);
}

// `svc --version` answers without loading the CLI: it is what scripts call most often to probe for svc.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  process.exit(0);
}

// `svc serve` runs long and sits idle between bursts of calls. Under load V8 grows the young generation
// from 1 MB semi-spaces to 16 MB ones and keeps them: 30 MB resident for objects that live a request.
// Kept at its first size, the emulator's memory stays about flat (issue 17), with no call measurably
// slower. This flag is read each time the young generation would grow, so it can be set here, before
// the CLI loads: node's own flags cannot be passed portably on the `#!` line. (`serve` anywhere in
// the arguments: a command that only mentions the word gets the same, harmless, tuning.)
// After a burst of calls, V8 keeps the old space it grew until its memory reducer runs, which may
// take tens of seconds or not come at all: serve gives it back once it has been quiet for 5 s
// (src/lib/idle-release.ts; its sandbox processes do the same).
const serving = args.includes('serve');
if (serving) (await import('node:v8')).setFlagsFromString('--semi-space-growth-factor=1');

import('../dist/cli/main.js').then(
  async (cli) => {
    if (serving) (await import('../dist/lib/idle-release.js')).releaseWhenIdle();
    return cli.main();
  },
  (error) => {
    const notBuilt = error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli/main.js');
    process.stderr.write(notBuilt ? 'svc is not built: run `npm ci` (or `npm run build`) in its folder.\n' : `${error && error.stack}\n`);
    process.exit(1);
  },
);
