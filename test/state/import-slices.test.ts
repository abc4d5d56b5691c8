/**
 * A large state import lets other requests run while it checks, compares and seals (a slice at a
 * time), and is still one write: what the tenant changed meanwhile is planned again before it.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createTenant, sharedEmulator, unique } from '../helpers/emulator.js';

const emulator = sharedEmulator();

/** A state document of `count` tokens of about 500 bytes each. */
function stateOf(count: number): { text: string; ids: string[] } {
  const created_at = new Date().toISOString();
  const tokens = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    type: 'token',
    containers: ['/general/high/'],
    metadata: { n: String(i) },
    expires_at: null,
    created_at,
    data: { note: 'x'.repeat(300), n: i },
  }));
  const text = JSON.stringify({ svc_state: 1, applications: [], reactors: [], proxies: [], tokens });
  return { text, ids: tokens.map((token) => token.id) };
}

/** The bytes waiting in a loopback TCP socket's queues, by its ports (Linux: /proc/net/tcp and tcp6). */
function queued(localPort: number, remotePort: number): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    // Read at once (not through the thread pool, a turn of the loop a chunk): the import's turns are few.
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {}
    const lines = text.split('\n');
    for (const line of lines) {
      const [, local, remote, , queues] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${hex(localPort)}`) && remote?.endsWith(`:${hex(remotePort)}`)) {
        const [tx, rx] = queues!.split(':').map((n) => Number.parseInt(n, 16));
        return tx! + rx!;
      }
    }
  }
  return undefined;
}

/**
 * Posts the import; `whenRead` runs once the emulator has read its whole body (nothing left queued
 * on either end of its connection): the import's work has begun. Resolves with its answer.
 */
function postImport(
  url: string,
  key: string,
  text: string,
  query: string,
  whenRead: () => void,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/_emulator/state${query}`,
      { method: 'POST', headers: { 'svc-api-key': key, 'content-type': 'application/json' } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(body) }));
      },
    );
    request.on('error', reject);
    request.end(text, async () => {
      const { localPort, remotePort } = request.socket!;
      // Looked at every turn of the event loop (not every 20 ms): the import yields a turn between
      // slices, so the first turn after its body is read is seen while it works, however fast the machine.
      const deadline = Date.now() + 30_000;
      const drained = () =>
        (queued(localPort!, remotePort!) ?? 0) === 0 && (queued(remotePort!, localPort!) ?? 0) === 0;
      while (!drained()) {
        if (Date.now() > deadline) return reject(new Error('the emulator never read the whole import body'));
        await new Promise((resolve) => setImmediate(resolve));
      }
      whenRead();
    });
  });
}

describe('a large state import is sliced', () => {
  it('/health is answered while a 2.5 MB import is checked, compared and sealed', async () => {
    const emu = emulator();
    const tenant = await createTenant(emu, unique('importer'));
    const { text, ids } = stateOf(5000);
    const order: string[] = [];
    let health: Promise<void> | undefined;
    const imported = postImport(emu.url, tenant.management_key, text, '', () => {
      health = emu.call('GET', '/health', { key: null }).then((answer) => {
        expect(answer.status).toBe(200);
        order.push('health');
      });
    }).then((answer) => {
      order.push('import');
      return answer;
    });
    const answer = await imported;
    await health;
    expect(order).toEqual(['health', 'import']);
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
    expect(answer.body.changes).toHaveLength(5000);
    const last = await emu.call('GET', `/tokens/${ids[4999]}`, { key: tenant.private_key });
    expect(last.status, last.text).toBe(200);
    expect(last.body.id).toBe(ids[4999]);
  });

  it('a token created while a replacing import yields is planned again and deleted by its one write', async () => {
    const emu = emulator();
    const tenant = await createTenant(emu, unique('replacer'));
    const { text } = stateOf(5000);
    // Which ends first is the machine's to decide: a round the import wins says nothing, so the race is
    // run again (each round checked either way) until the create has landed while the import yielded.
    let landedMeanwhile = false;
    for (let round = 0; round < 6 && !landedMeanwhile; round++) {
      const order: string[] = [];
      let created: Promise<string> | undefined;
      const imported = postImport(emu.url, tenant.management_key, text, '?replace=1', () => {
        created = emu
          .call('POST', '/tokens', { key: tenant.private_key, body: { type: 'token', data: 'made meanwhile' } })
          .then((answer) => {
            expect(answer.status, answer.text).toBe(201);
            order.push('create');
            return answer.body.id as string;
          });
      }).then((answer) => {
        order.push('import');
        return answer;
      });
      const answer = await imported;
      const id = await created!;
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(200);
      const kept = await emu.call('GET', `/tokens/${id}`, { key: tenant.private_key });
      if (order[0] === 'create') {
        landedMeanwhile = true;
        expect(answer.body.changes).toContainEqual({ kind: 'tokens', id, name: null, action: 'delete' });
        expect(kept.status).toBe(404);
      } else {
        // Created after the import's write: it stays, and the import did not name it.
        expect(kept.status, kept.text).toBe(200);
        expect(answer.body.changes).not.toContainEqual(expect.objectContaining({ id }));
      }
    }
    expect(landedMeanwhile, 'a create never landed while the import yielded').toBe(true);
  });
});

describe('a state import racing its tenant', () => {
  it('a tenant deleted while its import yields keeps nothing: the import writes no record of a tenant gone', async () => {
    const emu = emulator();
    const witness = await createTenant(emu, unique('witness'));
    const totalUsed = async () => {
      const answer = await emu.call('GET', '/_emulator/quotas', { key: witness.management_key });
      expect(answer.status, answer.text).toBe(200);
      return answer.body.total.used as number;
    };
    const tenant = await createTenant(emu, unique('doomed'));
    const before = await totalUsed();
    const { text } = stateOf(5000);
    let deleted: Promise<boolean> | undefined;
    const answer = await postImport(emu.url, tenant.management_key, text, '', () => {
      deleted = emu.emulator.tenants.delete(tenant.id);
    });
    expect(await deleted!).toBe(true);
    // The tenant is gone: its import is refused, and nothing of it is kept.
    expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(404);
    const tenants = await emu.call('GET', '/_emulator/tenants', { key: null });
    expect(tenants.body.data.map((row: { id: string }) => row.id)).not.toContain(tenant.id);
    // Its two starter Applications are gone with it, and no token of the file was written.
    expect(await totalUsed()).toBeLessThan(before);
  });
});
