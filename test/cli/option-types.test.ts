import { describe, expectTypeOf, it } from 'vitest';
import type { ApplicationType } from '../../src/api/permissions.js';
import type { ArgsOf, OptionsOf } from '../../src/cli/option-types.js';
import type { pagingOptions } from '../../src/cli/commands/paging.js';
import type { noTransforms, proxyOptions } from '../../src/cli/commands/proxies/shared.js';
import type { reactorOptions } from '../../src/cli/commands/reactors/shared.js';
import type { APPLICATION_TYPES } from '../../src/api/permissions.js';

// These are checked by `npm run typecheck` (vitest runs them as empty tests): a handler's option types
// come from its specs, so a spec and the code that reads it cannot disagree.
describe('OptionsOf', () => {
  it('types a value flag as an optional string, a switch as an optional boolean, camelCased', () => {
    type Options = OptionsOf<
      readonly [{ flags: '--name <pattern>'; description: '' }, { flags: '--show-code'; description: '' }]
    >;
    expectTypeOf<Options>().toEqualTypeOf<{ name?: string; showCode?: boolean }>();
  });

  it('types a repeatable flag as a list, and names a flag with a short form by its long one', () => {
    type Options = OptionsOf<
      readonly [
        { flags: '-H, --header <header>'; description: ''; repeatable: true },
        { flags: '-X, --request <method>'; description: '' },
      ]
    >;
    expectTypeOf<Options>().toEqualTypeOf<{ header?: string[]; request?: string }>();
  });

  it('makes required flags and flags with a default always present, narrowed to their choices', () => {
    type Options = OptionsOf<
      readonly [
        { flags: '--type <type>'; description: ''; choices: typeof APPLICATION_TYPES; required: true },
        { flags: '--port <port>'; description: ''; default: '8790' },
        {
          flags: '--tier <tier>';
          description: '';
          choices: readonly ['enterprise', 'standard'];
          default: 'enterprise';
        },
      ]
    >;
    expectTypeOf<Options>().toEqualTypeOf<{ type: ApplicationType; port: string; tier: 'enterprise' | 'standard' }>();
  });

  it('types a lone --no-x as x: boolean (true unless passed), and --x beside --no-x as optional', () => {
    expectTypeOf<OptionsOf<readonly [{ flags: '--no-auth'; description: '' }]>>().toEqualTypeOf<{ auth: boolean }>();
    type Options = OptionsOf<typeof proxyOptions>;
    expectTypeOf<Options['requireAuth']>().toEqualTypeOf<boolean | undefined>();
  });

  it('adds false to a value flag that has a --no- form: the proxy update flags', () => {
    type Options = OptionsOf<readonly [...typeof proxyOptions, ...typeof noTransforms]>;
    expectTypeOf<Options>().toEqualTypeOf<{
      name?: string;
      destinationUrl?: string;
      requestTransform?: string | false;
      responseTransform?: string | false;
      configuration?: string[];
      application?: string | false;
      requireAuth?: boolean;
    }>();
  });

  it('reads shared spec lists declared as const', () => {
    expectTypeOf<OptionsOf<typeof pagingOptions>>().toEqualTypeOf<{ page?: string; size?: string }>();
    type Reactor = { name?: string; code?: string; configuration?: string[]; application?: string };
    expectTypeOf<OptionsOf<typeof reactorOptions>>().toEqualTypeOf<Reactor>();
  });

  it('gives no options for no specs', () => {
    expectTypeOf<OptionsOf<readonly []>>().toEqualTypeOf<Record<never, never>>();
  });
});

describe('ArgsOf', () => {
  it('types a required argument as a string and an optional one as possibly undefined', () => {
    type Args = ArgsOf<
      readonly [{ name: 'reactor'; description: '' }, { name: 'request-id'; description: ''; optional: true }]
    >;
    expectTypeOf<Args>().toEqualTypeOf<{ reactor: string; 'request-id': string | undefined }>();
  });
});
