/** The answer of `POST /_emulator/replay/{trace_id}` (`svc replay`): a past call re-run, compared stage by stage. */

/** One stage compared: what was kept and what the re-run made (null: the stage did not happen). */
export interface StageDiff {
  stage: string;
  same: boolean;
  recorded: unknown;
  replayed: unknown;
}

export interface ReplayAnswer {
  trace_id: string;
  /** The re-run's own trace id (its console lines and invocation events carry it). */
  replay_trace_id: string;
  kind: 'proxy' | 'reactor';
  id: string;
  name: string;
  /** When the call was made. */
  time: string;
  live: boolean;
  same: boolean;
  stages: StageDiff[];
}
