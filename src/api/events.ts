/**
 * What the emulator reports as it runs: published by the emulator (src/emulator/events.ts), shown
 * by the serve log and the dashboard, and meant for `svc logs` to stream. Events that belong to a
 * tenant (requests, runs of user code, its console lines, webhook attempts) carry its id, so that
 * each tenant's key can be shown only its own. No event carries an API key.
 */
export type EmulatorEventInit =
  /** One answered request; `tenantId` is the caller's (or, on /proxy, the proxy's), when known. */
  | {
      type: 'request';
      method: string;
      path: string;
      status: number;
      ms: number;
      traceId: string;
      tenantId?: string | undefined;
      /** On /proxy: how many tokens the body referenced and the proxy detokenized (a count, never a value). */
      detokenized?: number;
      /** A refused request (401, 403, detokenization 400): why, in one line (its explanation's reason; never a value). */
      reason?: string;
    }
  | { type: 'error'; traceId?: string; message: string; stack?: string | undefined }
  | { type: 'warning'; traceId?: string; message: string }
  | { type: 'expired'; applications: number; tokens: number; transactions: number; results: number }
  /** A run of user code: a reactor invocation or a proxy transform. */
  | {
      type: 'invocation';
      kind: 'reactor' | 'transform';
      name: string;
      id: string;
      tenantId: string;
      status: number;
      ms: number;
      requestId: string;
      error?: string;
      stack?: string | undefined;
    }
  /** A line user code wrote to its console. */
  | {
      type: 'console';
      source: string;
      tenantId?: string | undefined;
      level: string;
      text: string;
      requestId?: string | undefined;
    }
  /** Hot reload: a saved code file was loaded (ok) or refused, and the previous code keeps serving. */
  | { type: 'reload'; target: string; file: string; ok: boolean; ms: number; error?: string | undefined }
  /** One attempt to deliver an asynchronous reactor result, and where the delivery stands after it. */
  | {
      type: 'webhook';
      tenantId: string;
      reactorId: string;
      requestId: string;
      url: string;
      attempt: number;
      ok: boolean;
      status?: number | undefined;
      error?: string | undefined;
      delivery: 'pending' | 'delivered' | 'failed';
    }
  /**
   * The leak guard found a call's plaintext (or a card number) where it may not go: which call, which
   * place, which token and in which form, never the value. `action`: replaced in a log or event
   * (`redacted`), let through in warn mode (`warned`), or the call answered with a leak problem (`refused`).
   */
  | {
      type: 'leak';
      traceId: string;
      tenantId?: string | undefined;
      /** The call's code, when the place belongs to one. */
      kind?: 'reactor' | 'proxy' | 'transform' | undefined;
      id?: string | undefined;
      name?: string | undefined;
      place: LeakPlace;
      tokenId?: string | undefined;
      form: LeakEventForm;
      /** A scanned card number's last four digits. */
      last4?: string | undefined;
      action: 'redacted' | 'warned' | 'refused';
    };

/** Where a leak was found. */
export type LeakPlace = 'console' | 'log' | 'event' | 'error' | 'raw' | 'answer' | 'outbound' | 'recording';

/** A derived form of a call's plaintext the leak guard looks for (emulator/leaks/secrets.ts builds them). */
export type LeakForm =
  | 'plain'
  | 'base64'
  | 'base64url'
  | 'hex'
  | 'percent'
  | 'json'
  | 'card-spaced'
  | 'card-dashed'
  | 'card-grouped'
  | 'case'
  | 'unicode';

/** How the value stood there: as it is or a derived form of it, or a scanned `card`. */
export type LeakEventForm = LeakForm | 'card';

/** An event as subscribers get it: stamped with the ISO time it was published. */
export type EmulatorEvent = EmulatorEventInit & { time: string };

export type EmulatorEventType = EmulatorEvent['type'];
