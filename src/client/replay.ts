import type { ReplayAnswer } from '../api/replay.js';
import { routeMissingStatus } from './errors.js';
import type { Requester } from './requester.js';

/** The server has no replay route: not the emulator, or one from before `svc replay`. */
export class ReplayUnavailableError extends Error {
  override readonly name = 'ReplayUnavailableError';
  constructor(
    readonly url: string,
    readonly status: number,
  ) {
    super(`The server at ${url} offers no replay (HTTP ${status} on /_emulator/replay).`);
  }
}

/** `svc replay`'s route of the emulator, with the management key: a kept call re-run through today's code. */
export class ReplayApi {
  constructor(
    private readonly client: Requester,
    private readonly baseUrl: string,
  ) {}

  /**
   * `POST /_emulator/replay/{trace_id}`: the call re-run, compared stage by stage; `live` sends its
   * destination requests to the network instead of answering them with the kept answers.
   */
  async rerun(traceId: string, options: { live?: boolean } = {}): Promise<ReplayAnswer> {
    const path = `/_emulator/replay/${encodeURIComponent(traceId)}`;
    const body = options.live ? { live: true } : {};
    try {
      return await this.client.request<ReplayAnswer>('POST', path, { body, shape: 'object' });
    } catch (error) {
      const status = routeMissingStatus(error);
      throw status === undefined ? error : new ReplayUnavailableError(this.baseUrl, status);
    }
  }
}
