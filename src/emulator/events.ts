import type { EmulatorEvent, EmulatorEventInit } from '../api/events.js';

export type { EmulatorEvent, EmulatorEventInit, EmulatorEventType } from '../api/events.js';

/** What the emulator's parts call to report: the event as they know it; the hub stamps the time. */
export type EmitEvent = (event: EmulatorEventInit) => void;

export type EventListener = (event: EmulatorEvent) => void;

/** Where the emulator's events can be followed: the serve log, the dashboard, tests, `svc logs`. */
export interface EmulatorEvents {
  /** Calls `listener` with every event from now on, until the function returned is called. */
  subscribe(listener: EventListener): () => void;
}

/**
 * The emulator's events, to any number of subscribers. The emulator never logs by itself: it
 * publishes, and whoever listens turns events into lines. A subscriber that throws is told to the
 * others as an `error` event and keeps its subscription; it breaks neither them nor the emulator.
 */
export class EventHub implements EmulatorEvents {
  /** One entry per subscription: the same function subscribed twice is called twice, and unsubscribed once each. */
  private readonly subscriptions = new Set<{ listener: EventListener }>();
  private reporting = false;
  /** The last time stamped, by its millisecond: under load many events share one, and formatting it is most of a stamp. */
  private stamp = { ms: Number.NaN, iso: '' };
  /**
   * How far a tenant's clock is ahead of the emulator's (svc/testing's `t.clock`): a tenant's
   * events are stamped with its time. 0 for every tenant whose clock never moved.
   */
  clockOffset: (tenantId: string) => number = () => 0;

  /** Stamps `event` with the time and hands it to every subscriber (nothing to do when none listens). */
  readonly publish: EmitEvent = (event) => {
    if (this.subscriptions.size === 0) return;
    const { tenantId } = event as { tenantId?: string | undefined };
    const offset = tenantId === undefined ? 0 : this.clockOffset(tenantId);
    const time = offset === 0 ? this.now() : new Date(Date.now() + offset).toISOString();
    const stamped = { time, ...event } as EmulatorEvent;
    for (const subscription of this.subscriptions) {
      try {
        subscription.listener(stamped);
      } catch (error) {
        this.reportFailure(subscription, error);
      }
    }
  };

  private now(): string {
    const ms = Date.now();
    if (ms !== this.stamp.ms) this.stamp = { ms, iso: new Date(ms).toISOString() };
    return this.stamp.iso;
  }

  subscribe(listener: EventListener): () => void {
    const subscription = { listener };
    this.subscriptions.add(subscription);
    return () => {
      this.subscriptions.delete(subscription);
    };
  }

  private reportFailure(failed: { listener: EventListener }, error: unknown): void {
    // A failure while reporting a failure is dropped: reporting it again could go round forever.
    if (this.reporting) return;
    this.reporting = true;
    try {
      const cause = error instanceof Error ? error : new Error(String(error));
      const report = {
        time: new Date().toISOString(),
        type: 'error',
        message: `an event subscriber failed: ${cause.message}`,
        stack: cause.stack,
      } as const;
      for (const subscription of this.subscriptions) {
        if (subscription === failed) continue;
        try {
          subscription.listener(report);
        } catch {
          // The same rule as above: one failing subscriber is reported once, not in a loop.
        }
      }
    } finally {
      this.reporting = false;
    }
  }
}
