import type { ApiClient } from '../client/index.js';
import { executePlan, type Execution } from './execute.js';
import { plan as makePlan } from './plan.js';
import { identifyTarget, observe } from './session.js';
import { emptyTargetState, type Desired } from './types.js';

/**
 * svc.yaml applied to a target made for the run (`svc exec`'s emulator, svc/testing's template
 * tenant): planned against what the target holds, with no state or keys file, since no later apply
 * has anything to remember. The caller judges the outcomes (a failed change is in them, not thrown).
 */
export async function applyToFreshTarget(desired: Desired, client: ApiClient): Promise<Execution> {
  const [target, actual] = await Promise.all([identifyTarget(client), observe(client)]);
  const plan = makePlan({
    desired,
    state: emptyTargetState(),
    actual,
    options: { selfApplicationId: target.selfApplicationId },
  });
  return executePlan(plan, desired, { client });
}
