import { describe, expect, it } from 'vitest';
import { DeliverySlots, type ReleaseSlot } from '../../../src/emulator/services/webhook-slots.js';

describe('DeliverySlots', () => {
  it('grants in the order asked, skipping a tenant at its share; close ends every wait', async () => {
    const slots = new DeliverySlots(2, 1);
    const order: string[] = [];
    const take = (tenant: string, label: string) =>
      slots.take(tenant).then((release) => {
        order.push(release ? label : `${label}:closed`);
        return release;
      });
    const a1 = await take('a', 'a1');
    const a2 = take('a', 'a2');
    const a3 = take('a', 'a3');
    const b1 = await take('b', 'b1');
    const b2 = take('b', 'b2');
    expect(order).toEqual(['a1', 'b1']);
    expect(slots.inUse()).toBe(2);

    b1!();
    // b's room goes to b2 (a is at its share of one).
    await b2;
    a1!();
    await a2;
    expect(order).toEqual(['a1', 'b1', 'b2', 'a2']);
    slots.close();
    expect(await a3).toBeUndefined();
    expect(order.at(-1)).toBe('a3:closed');
    expect(await slots.take('c')).toBeUndefined();
  });

  it('a release given twice frees one slot', async () => {
    const slots = new DeliverySlots(1, 1);
    const first = (await slots.take('a')) as ReleaseSlot;
    const second = slots.take('b');
    first();
    first();
    expect(slots.inUse()).toBe(1);
    expect(await second).toEqual(expect.any(Function));
  });
});
