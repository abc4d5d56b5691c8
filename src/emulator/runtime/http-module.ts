/**
 * The `https` and `http` modules as user code sees them (user-modules.ts): `request` and `get` make
 * a SandboxRequest (https-facade.ts) that leaves from the emulator's outbound gateway, for either
 * scheme; an Agent is accepted and not used.
 */
import { METHODS, STATUS_CODES } from 'node:http';
import { type HttpsLink, type HttpsOwner, SandboxRequest, plainError } from './https-facade.js';
import { readRequest, type Scheme } from './https-options.js';

/** Accepted for compatibility (`agent: new https.Agent({ keepAlive: true })`); the emulator's connections are used. */
export class Agent {
  readonly options: Record<string, unknown>;
  constructor(options: unknown = {}) {
    this.options = typeof options === 'object' && options !== null ? { ...(options as object) } : {};
  }
  destroy(): void {}
}

/**
 * `require('https')` (or, with `http:`, `require('http')`) as user code sees it, its requests sent
 * over `link`: both leave from the emulator's outbound gateway, the one door out.
 */
export function httpsFacade(owner: () => HttpsOwner | undefined, link: HttpsLink, scheme: Scheme = 'https:'): object {
  const request = (...args: unknown[]): SandboxRequest => {
    const starter = owner();
    if (!starter || starter.finished)
      throw new Error('The call that would make this request has returned: outbound requests belong to their call.');
    const outgoing = new SandboxRequest(link, readRequest(args, scheme), starter);
    const end = () =>
      outgoing.destroy(
        plainError({ code: 'ERR_CALL_ENDED', message: 'The call that made this request has ended.' }, 'ended'),
      );
    starter.timers.add(end);
    outgoing.once('close', () => starter.timers.delete(end));
    return outgoing;
  };
  const get = (...args: unknown[]): SandboxRequest => {
    const outgoing = request(...args);
    outgoing.end();
    return outgoing;
  };
  return {
    request,
    get,
    Agent,
    globalAgent: new Agent(),
    STATUS_CODES: { ...STATUS_CODES },
    METHODS: [...METHODS],
  };
}
