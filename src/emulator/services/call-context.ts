import { CallSecrets } from '../leaks/secrets.js';
import type { Caller } from './applications.js';
import type { StagedIndex, TokenContext } from './token-view.js';

/**
 * The caller's side of one call of user code (a reactor's invoke), resolved once at its start and
 * handed down (TokenService.callContext makes it): who calls, found to hold token:use somewhere
 * (checked once, when it is made), in which transaction, and that transaction's staged writes, read
 * at their first need and kept for the rest of the call's detokenization. The code's side (its
 * bound Application, configuration and loaded version) is a CodeCall (invocation.ts).
 */
export class CallContext implements TokenContext {
  private stagedWrites: StagedIndex | undefined;
  /**
   * The plaintext this call's detokenizations revealed (never a mask): its args, a proxy's body,
   * its code's req.svc detokenizations. The leak guard looks for it wherever the call's output goes.
   */
  readonly secrets = new CallSecrets();

  constructor(
    readonly caller: Caller,
    readonly transactionId: string | undefined,
    private readonly readStaged: (ctx: TokenContext) => StagedIndex,
  ) {}

  /** The transaction's staged writes by token id (empty outside one), opened once for the call. */
  staged(): StagedIndex {
    this.stagedWrites ??= this.readStaged(this);
    return this.stagedWrites;
  }
}
