/** Stage by stage, a kept call against its re-run (pure). */
import type { StageDiff } from '../../api/replay.js';
import type { Stage } from './types.js';
import { canonicalJson } from '../../lib/canonical-json.js';

/**
 * Every stage of either, in the kept call's order (a stage only the re-run has comes after the
 * kept stage it followed); `null` where one has no such stage. Objects compare whatever the order
 * of their keys.
 */
export function compareStages(recorded: readonly Stage[], replayed: readonly Stage[]): StageDiff[] {
  const names: string[] = [];
  const seen = new Set<string>();
  const add = (name: string, at: number) => {
    if (seen.has(name)) return;
    seen.add(name);
    names.splice(at, 0, name);
  };
  for (const { stage } of recorded) add(stage, names.length);
  let after = -1;
  for (const { stage } of replayed) {
    if (seen.has(stage)) after = names.indexOf(stage);
    else add(stage, (after += 1));
  }
  const valueOf = (stages: readonly Stage[], name: string) => stages.find((stage) => stage.stage === name)?.value;
  return names.map((stage) => {
    const before = valueOf(recorded, stage) ?? null;
    const now = valueOf(replayed, stage) ?? null;
    return { stage, same: canonicalJson(before) === canonicalJson(now), recorded: before, replayed: now };
  });
}
