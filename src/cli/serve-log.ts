import { styleText } from 'node:util';
import type { Emulator, EmulatorEvent } from '../emulator/index.js';
import type { IO } from './io.js';

export type LogFormat = 'pretty' | 'json';

export interface ServeLog {
  started(emulator: Emulator, dataFile: string | undefined): void;
  event(event: EmulatorEvent): void;
  stopping(signal: string): void;
  stopped(): void;
}

/**
 * How `svc serve` reports: one JSON object per line (for machines, and whenever stdout is not a
 * terminal; the first is always `{"event":"listening",...}`), or short human lines.
 * Keys appear once, in the first start's bootstrap report, and only when they were generated.
 */
export function createServeLog(format: LogFormat, io: IO, color: boolean): ServeLog {
  const out = (line: string) => io.stdout.write(`${line}\n`);
  if (format === 'json') {
    const json = (value: Record<string, unknown>) => out(JSON.stringify(value));
    return {
      started(emulator, dataFile) {
        json({ event: 'listening', url: emulator.url });
        const { tenantId, created, generated } = emulator.bootstrap;
        json({
          event: 'ready',
          tier: emulator.tier,
          data: dataFile ?? null,
          credentials_file: emulator.credentialsFile ?? null,
          tenant_id: tenantId,
          created,
          ...(generated.managementKey && { management_key: generated.managementKey }),
          ...(generated.privateKey && { private_key: generated.privateKey }),
        });
      },
      event(event) {
        if (event.type === 'request') {
          const { method, path, status, ms, traceId } = event;
          json({ event: 'request', method, path, status, ms, trace_id: traceId });
        } else if (event.type === 'error') {
          json({ event: 'error', trace_id: event.traceId ?? null, message: event.message, stack: event.stack ?? null });
        } else {
          json({ event: 'expired', applications: event.applications, tokens: event.tokens, transactions: event.transactions });
        }
      },
      stopping: (signal) => json({ event: 'stopping', signal }),
      stopped: () => json({ event: 'stopped' }),
    };
  }

  const paint = (style: Parameters<typeof styleText>[0], text: string) => (color ? styleText(style, text) : text);
  return {
    started(emulator, dataFile) {
      const where = dataFile ? `data ${dataFile}` : 'in memory';
      out(`${paint('green', '●')} svc emulator listening on ${paint('bold', emulator.url)}  ${paint('dim', `(${emulator.tier} tier, ${where})`)}`);
      const { created, generated, tenantId } = emulator.bootstrap;
      if (created) out(`  Created tenant ${tenantId} with a management and a private Application.`);
      if (generated.managementKey || generated.privateKey) {
        const saved = emulator.credentialsFile ? ` (saved to ${emulator.credentialsFile})` : '';
        out(`  Their keys, shown this once${saved}:`);
        if (generated.managementKey) out(`    management  ${generated.managementKey}`);
        if (generated.privateKey) out(`    private     ${generated.privateKey}`);
      }
      out(paint('dim', '  Try: npx svc applications list        Stop: Ctrl-C'));
    },
    event(event) {
      const time = paint('dim', new Date().toISOString().slice(11, 19));
      if (event.type === 'request') {
        const status = paint(event.status >= 500 ? 'red' : event.status >= 400 ? 'yellow' : 'green', String(event.status));
        out(`${time} ${event.method} ${event.path} ${status} ${paint('dim', `${event.ms}ms`)}`);
      } else if (event.type === 'error') {
        out(`${time} ${paint('red', 'error')} ${event.traceId ? `[${event.traceId}] ` : ''}${event.stack ?? event.message}`);
      } else {
        out(`${time} expired: ${event.applications} Application(s), ${event.tokens} token(s), ${event.transactions} transaction(s)`);
      }
    },
    stopping: (signal) => out(`Stopping (${signal})…`),
    stopped: () => out('Stopped; the store is flushed.'),
  };
}
