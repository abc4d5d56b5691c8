/**
 * What the emulator reports as it runs. It never logs by itself: `svc serve` (or a test) turns
 * these typed events into lines. No event carries an API key.
 */
export type EmulatorEvent =
  | { type: 'request'; method: string; path: string; status: number; ms: number; traceId: string }
  | { type: 'error'; traceId?: string; message: string; stack?: string | undefined }
  | { type: 'warning'; traceId?: string; message: string }
  | { type: 'expired'; applications: number; tokens: number; transactions: number; results: number }
  /** A run of user code: a reactor invocation or a proxy transform. */
  | { type: 'invocation'; kind: 'reactor' | 'transform'; name: string; id: string; status: number; ms: number; requestId: string; error?: string; stack?: string | undefined }
  /** A line user code wrote to its console. */
  | { type: 'console'; source: string; level: string; text: string; requestId?: string | undefined }
  /** Hot reload: a saved code file was loaded (ok) or refused, and the previous code keeps serving. */
  | { type: 'reload'; target: string; file: string; ok: boolean; ms: number; error?: string | undefined }
  /** One attempt to deliver an asynchronous reactor result, and where the delivery stands after it. */
  | { type: 'webhook'; reactorId: string; requestId: string; url: string; attempt: number; ok: boolean; status?: number | undefined; error?: string | undefined; delivery: 'pending' | 'delivered' | 'failed' };

export type EmitEvent = (event: EmulatorEvent) => void;
