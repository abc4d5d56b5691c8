import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { projects } from './projects.js';

const root = fileURLToPath(new URL('..', import.meta.url));
// Each file's project by rule (test/projects.ts): a file added later finds its place.
const files = projects(root);

export default defineConfig({
  test: {
    root,
    // Generous bounds: a test waits for the event it checks, and a loaded machine (both cores busy
    // with other work) may take many times as long as a quiet one. No verdict depends on them.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    expect: { poll: { timeout: 20_000 } },
    // Two cores: two workers keep the machine responsive for the real servers the tests start.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      // Pure units: nothing started, no process-wide state; one module graph shared by the files of a worker.
      { extends: true, test: { name: 'unit', include: files.unit, isolate: false } },
      { extends: true, test: { name: 'integration', include: files.integration } },
      // The attack, escape, crash and fuzz suites: why users trust the sandbox; always in `npm test`.
      { extends: true, test: { name: 'attacks', include: files.attacks } },
    ],
  },
});
