/**
 * `svc serve --record DIR`, `--replay DIR` and `--on-miss`: the flags, and the emulator's `record` and
 * `replay` options made of them (paths relative to the current directory), bad combinations refused
 * in one line before anything starts.
 */
import path from 'node:path';
import { UsageError } from '../io/errors.js';

export const RECORDING_FLAGS = [
  {
    flags: '--record <dir>',
    description:
      'record every exchange with a destination to cassettes in DIR (one per origin; secrets as {{ token }})',
  },
  { flags: '--replay <dir>', description: 'answer destinations from the cassettes in DIR (no network)' },
  {
    flags: '--on-miss <mode>',
    description:
      'with --replay, a request no cassette answers: fails (the default), goes to the network (passthrough), or goes there and is recorded (record)',
    choices: ['fail', 'passthrough', 'record'],
  },
] as const;

export type OnMissFlag = 'fail' | 'passthrough' | 'record';

/** The emulator options of the flags given (none when none is). */
export function recordingOptions(
  flags: { record?: string | undefined; replay?: string | undefined; onMiss?: OnMissFlag | undefined },
  cwd: string,
): { record?: { dir: string }; replay?: { dir: string; onMiss: OnMissFlag } } {
  if (flags.record !== undefined && flags.replay !== undefined)
    throw new UsageError(
      '--record and --replay cannot be used together; to record what a replay misses, use --replay DIR --on-miss record.',
    );
  if (flags.onMiss !== undefined && flags.replay === undefined)
    throw new UsageError('--on-miss goes with --replay DIR (what a request no cassette answers gets).');
  for (const [flag, dir] of [
    ['--record', flags.record],
    ['--replay', flags.replay],
  ] as const)
    if (dir !== undefined && dir.trim() === '') throw new UsageError(`${flag} takes a folder, not an empty name.`);
  return {
    ...(flags.record !== undefined && { record: { dir: path.resolve(cwd, flags.record) } }),
    ...(flags.replay !== undefined && {
      replay: { dir: path.resolve(cwd, flags.replay), onMiss: flags.onMiss ?? 'fail' },
    }),
  };
}
