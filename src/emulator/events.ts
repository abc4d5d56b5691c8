/**
 * What the emulator reports as it runs. It never logs by itself: `svc serve` (or a test) turns
 * these typed events into lines. No event carries an API key.
 */
export type EmulatorEvent =
  | { type: 'request'; method: string; path: string; status: number; ms: number; traceId: string }
  | { type: 'error'; traceId?: string; message: string; stack?: string | undefined }
  | { type: 'expired'; applications: number; tokens: number; transactions: number };

export type EmitEvent = (event: EmulatorEvent) => void;
