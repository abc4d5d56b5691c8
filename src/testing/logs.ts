import type { EmulatorEvent, EmulatorEvents } from '../emulator/index.js';

/** How many calls' console lines a tenant keeps while nobody has asked for them (calls made with `t.client`). */
const KEPT_CALLS = 256;

/**
 * The console lines of user code by tenant and call (trace id), read off the emulator's events: the
 * sandbox sends a call's lines before its result, so they are here when its answer arrives.
 */
export class ConsoleLines {
  private readonly byTenant = new Map<string, Map<string, string[]>>();
  private readonly unsubscribe: () => void;

  constructor(events: EmulatorEvents) {
    this.unsubscribe = events.subscribe((event) => this.add(event));
  }

  /** Starts keeping the lines of a tenant's calls. */
  watch(tenantId: string): void {
    this.byTenant.set(tenantId, new Map());
  }

  /** Stops keeping them, and drops what was kept. */
  forget(tenantId: string): void {
    this.byTenant.delete(tenantId);
  }

  /** The lines of one call, taken (asked once). */
  take(tenantId: string, traceId: string | undefined): string[] {
    const calls = this.byTenant.get(tenantId);
    if (!calls || traceId === undefined) return [];
    const lines = calls.get(traceId) ?? [];
    calls.delete(traceId);
    return lines;
  }

  close(): void {
    this.unsubscribe();
    this.byTenant.clear();
  }

  private add(event: EmulatorEvent): void {
    if (event.type !== 'console' || event.tenantId === undefined || event.requestId === undefined) return;
    const calls = this.byTenant.get(event.tenantId);
    if (!calls) return;
    let lines = calls.get(event.requestId);
    if (!lines) {
      if (calls.size >= KEPT_CALLS) calls.delete(calls.keys().next().value!);
      calls.set(event.requestId, (lines = []));
    }
    lines.push(event.text);
  }
}
