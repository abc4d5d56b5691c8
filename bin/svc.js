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

import('../dist/cli/main.js').then(
  (cli) => cli.main(),
  (error) => {
    const notBuilt = error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli/main.js');
    process.stderr.write(notBuilt ? 'svc is not built: run `npm ci` (or `npm run build`) in its folder.\n' : `${error && error.stack}\n`);
    process.exit(1);
  },
);
