import type { FeedItem } from './dashboard-state.js';
import type { ServeEventSource, ServeNote } from './serve-types.js';

/** The emulator's events and `svc serve`'s own notes, as one ordered stream for the dashboard's log. */
export interface ServeFeed {
  /** Delivers every item from now on; the events are subscribed to only while someone listens. */
  subscribe(listener: (item: FeedItem) => void): () => void;
  note(note: ServeNote): void;
  /** How many items were delivered so far: the dashboard numbers its log lines in the same order. */
  readonly delivered: number;
}

export function createServeFeed(events: ServeEventSource): ServeFeed {
  const listeners = new Set<(item: FeedItem) => void>();
  let delivered = 0;
  let stopEvents: (() => void) | undefined;
  const deliver = (item: FeedItem) => {
    if (listeners.size === 0) return;
    delivered++;
    for (const listener of listeners) listener(item);
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      stopEvents ??= events.subscribe((event) => deliver({ kind: 'event', event }));
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0) return;
        stopEvents?.();
        stopEvents = undefined;
      };
    },
    note: (note) => deliver({ kind: 'note', note }),
    get delivered() {
      return delivered;
    },
  };
}
