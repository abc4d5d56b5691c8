import { describe, expect, it } from 'vitest';
import { ApiClient, ApiError, createEmulator, PROBLEM_TYPES } from '../src/index.js';

describe('the library entry', () => {
  it('exports the emulator and the client of its API, which work together', async () => {
    const emulator = createEmulator({ port: 0, inMemory: true, managementKey: 'library-management-key-1' });
    try {
      const { url } = await emulator.ready;
      const client = new ApiClient({ baseUrl: url, managementKey: 'library-management-key-1' });
      expect((await client.applications.self()).type).toBe('management');
      const refused = await client.applications
        .get('00000000-0000-4000-8000-000000000000')
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).type).toBe(PROBLEM_TYPES.notFound);
    } finally {
      await emulator.dispose();
    }
  });
});
