// The hot-reload path for `npm run bench`: an emulator whose reactor code lives in a watched file.
// It is the path `svc serve --config` is to take when it lands with svc.yaml (a later issue): a
// save is read by the emulator's CodeWatcher and applied through the API (PATCH), which loads the
// code in a fresh worker and swaps it in. Prints {"url", "id"} once the file is watched.
//   node bench/reload.js <code-file> <management-key> <private-key>
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { createEmulator } from '../dist/emulator/index.js';
import { CodeWatcher } from '../dist/emulator/watch/code-watcher.js';

const [file, managementKey, privateKey] = process.argv.slice(2);
const emulator = createEmulator({ port: 0, inMemory: true, managementKey, privateKey, runtime: { prewarm: true } });
const { url } = await emulator.ready;

async function call(method, path, body, contentType = 'application/json') {
  const response = await request(`${url}${path}`, { method, headers: { 'svc-api-key': managementKey, 'content-type': contentType }, body: JSON.stringify(body) });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const code = await readFile(file, 'utf8');
const reactor = await call('POST', '/reactors', { name: 'reload', code, configuration: {} });
const watcher = new CodeWatcher(
  [{ file, label: 'reactor reload', loaded: code, reload: (text) => call('PATCH', `/reactors/${reactor.id}`, { code: text }, 'application/merge-patch+json') }],
  { emit: (event) => event.type === 'reload' && !event.ok && process.stderr.write(`reload failed: ${event.error}\n`) },
);
await watcher.whenReady();
process.stdout.write(`${JSON.stringify({ url, id: reactor.id })}\n`);

process.on('SIGTERM', async () => {
  await watcher.close();
  await emulator.dispose();
  process.exit(0);
});
