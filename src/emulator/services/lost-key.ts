import type { WriteBatch } from '../store/batch.js';
import type { Store } from '../store/store.js';
import type { Cipher } from '../crypto/cipher.js';
import { resetLostConfigurations, sealPlaintextConfigurations } from './configuration.js';
import type { Services } from './index.js';

/** Whether the store holds token data, saved or staged in a transaction: sealed, it needs its master key. */
export function holdsTokens(store: Store): boolean {
  if (!store.tokens.empty) return true;
  for (const transaction of store.transactions.everything())
    if (transaction.staged.some((op) => op.op === 'put')) return true;
  return false;
}

/**
 * What the start seals, in one write (all or nothing) before anything is served: configuration an
 * earlier svc kept in plaintext, and, under a master key just made (`newKey`: the old one is lost),
 * everything sealed under the old key made anew (see resealLost). Returns the warnings to show.
 */
export function sealAtStart(store: Store, services: Services, cipher: Cipher, newKey: boolean): Promise<string[]> {
  return store.write((batch) => {
    // What was kept is sealed anew, never refused by a full quota (that would fail the start).
    batch.bookkeeping();
    // First: a configuration kept in plaintext reads as it is, and is sealed under the new key too.
    sealPlaintextConfigurations(store, cipher, batch);
    return newKey ? resealLost(store, services, cipher, batch) : [];
  });
}

/**
 * In `batch`, under a new master key on a store without tokens (its key file was deleted): what was
 * sealed under the old key is made anew rather than left to fail at every start: webhook signing
 * secrets, proxy keys, result outcomes, and reactor and proxy configuration (emptied: it must be
 * entered again). Returns a warning for each kind of thing changed, naming what it concerns.
 */
function resealLost(store: Store, services: Services, cipher: Cipher, batch: WriteBatch): string[] {
  const lost = 'master.key was missing: made a new one;';
  const messages: string[] = [];
  const tenants = services.webhooks.forgetSecrets(batch);
  if (tenants.length > 0)
    messages.push(`${lost} the webhook signing secret of tenant ${tenants.join(', ')} is made anew.`);
  const proxies = services.proxies.reissueKeys(batch);
  if (proxies.length > 0)
    messages.push(`${lost} proxies ${proxies.join(', ')} have new keys (GET /proxies/{id} shows them).`);
  const results = services.results.forgetOutcomes(batch);
  if (results > 0) messages.push(`${lost} ${results} stored asynchronous reactor results lost their outcome.`);
  const configurations = resetLostConfigurations(store, cipher, batch);
  if (configurations.reactors.length > 0) {
    messages.push(
      `${lost} the configuration of reactors ${configurations.reactors.join(', ')} is emptied; enter it again (a PATCH of its configuration).`,
    );
  }
  if (configurations.proxies.length > 0) {
    messages.push(
      `${lost} the configuration of proxies ${configurations.proxies.join(', ')} is emptied; enter it again (a PATCH of its configuration).`,
    );
  }
  return messages;
}
