/** The process's surroundings, passed in so the CLI can run in-process under test. */
export interface Writable {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface IO {
  stdout: Writable;
  stderr: Writable;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM; long-running commands (serve) stop on it. */
  signal: AbortSignal;
}
