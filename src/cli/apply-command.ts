import path from 'node:path';
import {
  ApplyError,
  applyDocument,
  exitCodeOf,
  parseAddress,
  prepareApply,
  prepareFromPlanFile,
  watchConfig,
  writePlanFile,
  type ApplyResult,
  type PreparedApply,
  type WatchEvent,
} from '../apply/index.js';
import type { OutcomeView } from '../api/plan.js';
import { formatApplied, formatHeld, formatOutcome, formatPlan } from '../ui/render-plan.js';
import type { Context } from './context.js';
import { announceTarget } from './io/confirm.js';
import { UsageError, UserError } from './io/errors.js';
import { askWord, askYesNo, canPrompt } from './io/prompt.js';
import { isLoopback, targetLine } from './target/describe.js';

/** The flags as the handler gets them (typed from the specs below). */
export interface ApplyFlags {
  file: string;
  dryRun?: boolean;
  prune?: boolean;
  watch?: boolean;
  detailedExitcode?: boolean;
  target?: string[];
  out?: string;
  yes?: boolean;
  showSecrets?: boolean;
  allowOutsideProject?: boolean;
}

/**
 * `svc apply`'s work, loaded when the command runs: the apply engine brings yaml, ajv, acorn and diff,
 * which no other command needs at start.
 */
export async function applyCommand(plan: string | undefined, flags: ApplyFlags, ctx: Context): Promise<number> {
  const { io, output } = ctx;
  checkFlags(flags, plan, output.json);
  const client = await ctx.client();
  const outside = flags.allowOutsideProject ? { allowOutsideProject: true } : {};
  const prepared = await engine(() => {
    if (plan !== undefined) return prepareFromPlanFile(plan, { client, cwd: io.cwd, env: io.env, ...outside });
    const targets = flags.target?.map(checkAddress);
    const { file, prune = false } = flags;
    // Watching, a broken code file holds back only its own resource, from the first apply on (watch.ts).
    const hold = flags.watch ? { holdBroken: true } : {};
    return prepareApply({
      client,
      file,
      cwd: io.cwd,
      env: io.env,
      prune,
      ...outside,
      ...hold,
      ...(targets && { targets }),
    });
  });
  // The folder's apply lock is held from the plan to its end (prepared.apply releases it), or released here.
  try {
    const color = output.options.color && io.stdout.isTTY === true;
    if (!output.json) {
      await announceTarget(ctx);
      output.line(`${prepared.desired.file} -> ${prepared.target.url} (tenant ${prepared.target.tenantId})`);
      output.painted(formatPlan(prepared.plan, { color, file: prepared.desired.file }).trimEnd());
      for (const held of prepared.plan.held ?? []) output.painted(formatHeld(held, { color }));
    }
    const detailed = flags.detailedExitcode ?? false;
    if (flags.out !== undefined || flags.dryRun) {
      if (flags.out !== undefined) {
        await writePlanFile(path.resolve(io.cwd, flags.out), prepared, new Date());
        output.note(`Plan saved to ${flags.out}; apply it with \`svc apply ${flags.out}\`.`);
      }
      if (output.json) output.line(JSON.stringify(applyDocument(prepared, undefined), null, 2));
      return exitCodeOf(prepared, undefined, detailed);
    }
    await confirmChanges(prepared, flags, ctx);
    const progress = !output.json && {
      onOutcome: (outcome: OutcomeView) => output.painted(formatOutcome(outcome, { color })),
    };
    // Ctrl-C (or SIGTERM) while changes run: those under way finish, so that an Application the
    // server made has its key saved; none more start. A second one stops at once.
    const interrupted = () =>
      output.note('Interrupted: finishing the changes under way, starting no more (again to stop at once).');
    if (!flags.watch) io.signal.addEventListener('abort', interrupted, { once: true });
    let result: Awaited<ReturnType<typeof prepared.apply>>;
    try {
      result = await engine(() => prepared.apply({ signal: io.signal, ...progress }));
    } finally {
      io.signal.removeEventListener('abort', interrupted);
    }
    report(prepared, result, flags, ctx);
    if (!flags.watch) return io.signal.aborted ? 130 : exitCodeOf(prepared, result, detailed);
    await watch(prepared, result, flags, ctx, color);
    return 0;
  } finally {
    await prepared.release();
  }
}

function checkFlags(flags: ApplyFlags, planFile: string | undefined, json: boolean): void {
  if (planFile !== undefined) {
    const given = [
      flags.file !== 'svc.yaml' && '-f',
      flags.prune && '--prune',
      flags.target && '--target',
      flags.out !== undefined && '--out',
      flags.watch && '--watch',
    ].filter(Boolean);
    if (given.length > 0)
      throw new UsageError(`A saved plan is applied as it was made; ${given.join(', ')} cannot change it.`);
  }
  if (flags.watch && (flags.dryRun || flags.out !== undefined)) {
    throw new UsageError('--watch applies; it cannot go with --dry-run or --out.');
  }
  if (flags.watch && json) throw new UsageError('--watch prints a line per change; it does not take --json.');
  if (flags.watch && flags.prune && !flags.yes) {
    throw new UsageError('--watch --prune deletes without asking on each save; add --yes to say so.');
  }
}

function checkAddress(address: string): string {
  if (parseAddress(address)) return address;
  throw new UsageError(
    `--target takes kind.name (applications, reactors or proxies), e.g. reactors.charge, not "${address}".`,
  );
}

/** The engine's expected failures are the user's to fix: one line, exit 1 (2 for a wrong command line). */
async function engine<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApplyError)) throw error;
    const Kind = error.exitCode === 2 ? UsageError : UserError;
    throw new Kind(error.message, { cause: error });
  }
}

/**
 * Deletions need a yes: --yes, or `yes` typed at a terminal. Any change to a target off this machine
 * (loopback never asks) needs one too: --yes, or y at a terminal; without one it is refused naming --yes.
 */
async function confirmChanges(prepared: PreparedApply, flags: ApplyFlags, ctx: Context): Promise<void> {
  const { changes } = prepared.plan;
  if (changes.length === 0 || flags.yes) return;
  const deletions = changes.filter((change) => change.action === 'delete');
  const target = await ctx.target();
  const remote = !isLoopback(target.baseUrl);
  if (deletions.length === 0 && !remote) return;
  const where = targetLine(target, ctx.io.cwd).replace(/^target /, '');
  const count = (n: number) => `${n} resource${n === 1 ? '' : 's'}`;
  const what = `${count(deletions.length)} (${deletions.map((change) => change.address).join(', ')})`;
  if (ctx.output.json || !canPrompt(ctx.io)) {
    const why = deletions.length > 0 ? `The plan deletes ${what}` : `The plan changes ${where}, not this machine`;
    throw new UsageError(`${why}; pass --yes to apply it without a terminal.`);
  }
  if (deletions.length > 0) {
    const on = remote ? ` on ${where}` : '';
    const question = `Delete ${what}${on}? Type yes to apply the plan: `;
    if (!(await askWord(ctx.io, question, 'yes'))) throw new UserError('Nothing applied.');
  } else if (
    !(await askYesNo(ctx.io, `Apply ${changes.length} change${changes.length === 1 ? '' : 's'} to ${where}?`))
  ) {
    throw new UserError('Nothing applied.');
  }
}

function report(prepared: PreparedApply, result: ApplyResult, flags: ApplyFlags, ctx: Context): void {
  const { output } = ctx;
  if (output.json) {
    output.line(JSON.stringify(applyDocument(prepared, result), null, 2));
    if (flags.showSecrets)
      output.note(`--show-secrets prints nothing with --json; the keys are in ${result.keysFile}.`);
    return;
  }
  if (result.keys.length > 0 && flags.showSecrets) {
    for (const key of result.keys) output.line(`applications.${key.name} key: ${key.key}`);
  } else if (result.keys.length > 0) {
    const names = result.keys.map((key) => `applications.${key.name}`).join(', ');
    const [one, file] = [result.keys.length === 1, path.relative(ctx.io.cwd, result.keysFile)];
    const [is, it] = one ? ['is', 'it'] : ['are', 'them'];
    output.note(`The key${one ? '' : 's'} of ${names} ${is} in ${file} (0600); --show-secrets prints ${it}.`);
  }
  if (prepared.plan.changes.length === 0) return;
  if (result.status === 'failed') output.note(`Error: ${formatApplied(result.outcomes)}`);
  else output.line(formatApplied(result.outcomes));
}

/** --watch: a line per change (with the time from the save), until Ctrl-C. */
async function watch(
  prepared: PreparedApply,
  result: ApplyResult,
  flags: ApplyFlags,
  ctx: Context,
  color: boolean,
): Promise<void> {
  const { io, output } = ctx;
  const onEvent = (event: WatchEvent) => {
    if (event.type === 'watching') {
      const files = `${event.files.length} file${event.files.length === 1 ? '' : 's'}`;
      output.note(`Watching ${files} (${prepared.desired.file} and what it names); Ctrl-C stops.`);
    } else if (event.type === 'change') {
      output.painted(formatOutcome({ ...event.outcome, ms: event.latencyMs }, { color, changed: event.fields }));
    } else if (event.type === 'no-changes') {
      // After a problem was said, the save that mends it is said too, even with nothing to send.
      const fixed = event.fixed ? `Fixed: ${prepared.desired.file} loads again, as last applied; no` : 'No';
      output.line(`${fixed} changes (${event.latencyMs} ms).`);
    } else if (event.type === 'held') {
      output.painted(formatHeld(event, { color }));
    } else if (event.type === 'invalid') {
      output.note(`${event.message}; nothing was sent.`);
    } else if (event.type === 'warning') {
      output.note(`Warning: ${event.message}`);
    } else {
      output.note(`Error: ${event.message}`);
    }
  };
  const watcher = watchConfig({
    client: await ctx.client(),
    file: flags.file,
    cwd: io.cwd,
    env: io.env,
    ...(flags.allowOutsideProject && { allowOutsideProject: true }),
    prune: flags.prune ?? false,
    ...(flags.target && { targets: flags.target }),
    ...(result.status !== 'failed' && { applied: prepared.desired }),
    onEvent,
  });
  await watcher.ready;
  if (!io.signal.aborted) await new Promise((resolve) => io.signal.addEventListener('abort', resolve, { once: true }));
  await watcher.close();
}
