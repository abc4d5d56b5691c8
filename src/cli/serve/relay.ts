import type { EmulatorEvent } from '../../api/events.js';
import type { ServeEventSource } from '../../ui/serve-types.js';

export interface ServeRelay extends ServeEventSource {
  publish(event: EmulatorEvent): void;
}

/**
 * Where the dashboard reads `svc serve`'s events: the emulator's and serve's own (the applies of
 * svc.yaml). Events published before anyone subscribes (the warnings of the start, which come
 * before the dashboard can be drawn) are held and handed to the first subscriber.
 */
export function createServeRelay(): ServeRelay {
  const listeners = new Set<(event: EmulatorEvent) => void>();
  let held: EmulatorEvent[] | undefined = [];
  return {
    publish(event) {
      if (held) held.push(event);
      for (const listener of listeners) listener(event);
    },
    subscribe(listener) {
      listeners.add(listener);
      const earlier = held ?? [];
      held = undefined;
      for (const event of earlier) listener(event);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
