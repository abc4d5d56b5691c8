import { expect, it } from 'vitest';
import { compareStages } from '../../src/emulator/replay/compare.js';
import { shown } from '../../src/emulator/replay/redact.js';

it('a kept JSON body nested deeper than MAX_DEPTH is shown as text, and compared without overflowing the stack', () => {
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  expect(shown(deep)).toBe(deep);
  expect(shown('{"a":[1,{"b":2}]}')).toEqual({ a: [1, { b: 2 }] });
  const stage = { stage: 'destination_answer', value: shown(deep) };
  expect(compareStages([stage], [stage])).toEqual([
    { stage: 'destination_answer', same: true, recorded: deep, replayed: deep },
  ]);
});
