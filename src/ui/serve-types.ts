import type { EmulatorEvent } from '../api/events.js';

/** An emulator event as the serve hub hands it out: stamped with the time it happened (ISO 8601). */
export type ServeEvent = EmulatorEvent & { time: string };

/** Where the dashboard's events come from: the emulator's event hub, or anything shaped like it. */
export interface ServeEventSource {
  /** Calls `listener` with every event from now on; returns the function that stops it. */
  subscribe(listener: (event: ServeEvent) => void): () => void;
}

/** A line `svc serve` itself adds to the log (an apply result, a failed re-apply). */
export interface ServeNote {
  level: 'info' | 'warn' | 'error';
  text: string;
  /** ISO 8601; now when absent. */
  time?: string;
}

/** A bootstrap key, by name ("management", "private"). */
export interface ServeKey {
  name: string;
  value: string;
}

/** A resource svc.yaml put on the emulator. */
export interface ServeResource {
  kind: 'application' | 'reactor' | 'proxy';
  name: string;
}
