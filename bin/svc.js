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
// from 1 MB to 32 MB and keeps it, with the old space the burst grew, until its memory reducer runs,
// which may take tens of seconds or not come at all: serve gives both back once it has been quiet for
// about 7 s (src/lib/idle-release.ts; its sandbox processes do the same). The young generation is
// not held at 1 MB meanwhile (--semi-space-growth-factor=1): collected 12 times as often, it cost a
// tenth of the instructions of a proxied call (`node bench/profile.js proxy --instructions`).
// (`serve` anywhere in the arguments: a command that only mentions the word gets the same timer.)
const serving = args.includes('serve');

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
