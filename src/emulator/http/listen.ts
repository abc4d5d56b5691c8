import type { AddressInfo } from 'node:net';
import { EmulatorError } from '../errors.js';
import type { HttpServer } from './front.js';

/**
 * Listens on `host:port`; resolves to the URL callers use. A port in use or an address that is not
 * local is an EmulatorError.
 */
export async function listen(server: HttpServer, port: number, host: string): Promise<string> {
  try {
    await server.listen(port, host);
  } catch (error) {
    await server.close().catch(() => {});
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new EmulatorError(
        (name) =>
          `Port ${port} on ${host} is already in use (another svc serve?). ` +
          `Stop it, or choose another ${name('port')} (0 picks a free one).`,
        {
          option: 'port',
          cause: error,
        },
      );
    }
    if (code === 'EACCES')
      throw new EmulatorError(
        (name) => `Not allowed to listen on ${host}:${port}; pick another ${name('port')}, above 1023.`,
        {
          option: 'port',
          cause: error,
        },
      );
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new EmulatorError((name) => `Cannot listen on ${name('host')} ${host}: no such local address.`, {
        option: 'host',
        cause: error,
      });
    }
    throw error;
  }
  return formatUrl(host, (server.server.address() as AddressInfo).port);
}

/** `http://host:port`, with a wildcard address as the loopback one a client can reach. */
function formatUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}
