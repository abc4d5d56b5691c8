import { describe, expect, it } from 'vitest';
import { NameLookupError } from '../../src/requests/errors.js';
import { isUuid } from '../../src/api/patterns.js';
import { resolveByName } from '../../src/requests/lookup.js';

const ID = '3f2b1c9e-8a47-4d2b-9c1e-5f6a7b8c9d0e';
const OTHER = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

describe('resolveByName', () => {
  it('uses an id as it is, without listing', async () => {
    const all = () => Promise.reject(new Error('must not list'));
    expect(await resolveByName(ID, all, 'reactor')).toBe(ID);
    expect(isUuid(ID.toUpperCase())).toBe(true);
  });

  it('finds the one resource with exactly that name', async () => {
    const all = async () => [
      { id: ID, name: 'charge' },
      { id: OTHER, name: 'Charge' },
    ];
    expect(await resolveByName('Charge', all, 'reactor')).toBe(OTHER);
  });

  it('says when no resource has the name', async () => {
    const error = await resolveByName('ghost', async () => [], 'proxy').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NameLookupError);
    expect(error).toMatchObject({ noun: 'proxy', lookedUp: 'ghost', ids: [], message: 'No proxy named "ghost".' });
  });

  it('lists the ids when several resources share the name', async () => {
    const all = async () => [
      { id: ID, name: 'twin' },
      { id: OTHER, name: 'twin' },
    ];
    await expect(resolveByName('twin', all, 'proxy')).rejects.toThrow(
      `2 proxies are named "twin"; use an id: ${ID}, ${OTHER}.`,
    );
  });
});
