import { describe, expect, test } from 'vitest';
import type { Application, Proxy, Reactor } from '../../src/api/types.js';
import { contentHash } from '../../src/apply/compare.js';
import { ApplyError } from '../../src/apply/errors.js';
import { plan } from '../../src/apply/plan.js';
import { applicationSpec, reactorSpec } from '../../src/apply/specs.js';
import {
  emptyTargetState,
  type Actual,
  type Desired,
  type DesiredApplication,
  type DesiredProxy,
  type DesiredReactor,
  type TargetState,
} from '../../src/apply/types.js';

// Literals in, a Plan out: no server, no files, no clock.

const CODE = 'module.exports = async () => ({ raw: 1 });\n';
const SECRET = 'sk_live_do_not_print_me';

type Parts = { applications?: DesiredApplication[]; reactors?: DesiredReactor[]; proxies?: DesiredProxy[] };
type Entry = { id: string; hash?: string };

function desired(parts: Parts = {}): Desired {
  return { file: 'svc.yaml', dir: '/project', applications: [], reactors: [], proxies: [], files: [], ...parts };
}

const app = (name: string, extra: Partial<DesiredApplication> = {}): DesiredApplication => ({
  name,
  type: 'private',
  permissions: ['token:use'],
  rules: [],
  line: 2,
  ...extra,
});
const reactor = (name: string, extra: Partial<DesiredReactor> = {}): DesiredReactor => ({
  name,
  code: { path: `reactors/${name}.js`, code: CODE },
  configuration: {},
  application: null,
  line: 8,
  ...extra,
});
const proxy = (name: string, extra: Partial<DesiredProxy> = {}): DesiredProxy => ({
  name,
  destination_url: 'https://api.example.com',
  request_transform: null,
  response_transform: null,
  configuration: null,
  application: null,
  require_auth: true,
  line: 14,
  ...extra,
});

let ids = 0;
const nextId = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`;
const target = { tenant_id: 't' };

const remoteApp = (name: string, extra: Partial<Application> = {}): Application => ({
  id: nextId(),
  ...target,
  name,
  type: 'private',
  permissions: ['token:use'],
  rules: [],
  ...extra,
});
const remoteReactor = (name: string, extra: Partial<Reactor> = {}): Reactor => ({
  id: nextId(),
  ...target,
  name,
  code: CODE,
  configuration: {},
  application: null,
  created_at: '',
  modified_at: '',
  ...extra,
});
const remoteProxy = (name: string, extra: Partial<Proxy> = {}): Proxy => ({
  id: nextId(),
  ...target,
  name,
  key: 'proxy-key',
  destination_url: 'https://api.example.com',
  request_transform: null,
  response_transform: null,
  application_id: null,
  configuration: null,
  require_auth: true,
  created_at: '',
  modified_at: '',
  ...extra,
});

function actual(parts: Partial<Actual> = {}): Actual {
  return { applications: [], reactors: [], proxies: [], ...parts };
}

function stateOf(entries: Partial<Record<keyof TargetState, Record<string, Entry>>>): TargetState {
  const state = emptyTargetState();
  for (const [kind, byName] of Object.entries(entries) as [keyof TargetState, Record<string, Entry>][]) {
    for (const [name, entry] of Object.entries(byName))
      state[kind][name] = { id: entry.id, hash: entry.hash ?? 'recorded' };
  }
  return state;
}

describe('plan: what a desired resource needs', () => {
  test('nothing on the target: every resource is created, Applications first', () => {
    const result = plan({
      desired: desired({
        applications: [app('backend')],
        reactors: [reactor('charge', { application: 'backend' })],
        proxies: [proxy('stripe')],
      }),
      state: emptyTargetState(),
      actual: actual(),
    });
    expect(result.changes.map((change) => [change.action, change.address])).toEqual([
      ['create', 'applications.backend'],
      ['create', 'reactors.charge'],
      ['create', 'proxies.stripe'],
    ]);
    expect(result.changes[1]!.dependsOn).toEqual(['applications.backend']);
    expect(result.changes[2]!.dependsOn).toEqual([]);
  });

  test('a resource that matches what the target holds (found through the state) plans nothing', () => {
    const remote = remoteReactor('charge', { configuration: { A: '1' } });
    const result = plan({
      desired: desired({ reactors: [reactor('charge', { configuration: { A: '1' } })] }),
      state: stateOf({ reactors: { charge: { id: remote.id } } }),
      actual: actual({ reactors: [remote] }),
    });
    expect(result.changes).toEqual([]);
    expect(result.ids).toEqual({ 'reactors.charge': remote.id });
  });

  test('what the server normalises (container case, permission order and repeats) is no change', () => {
    const remote = remoteApp('backend', {
      permissions: ['token:use', 'token:read'],
      rules: [{ priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] }],
    });
    const wanted = app('backend', {
      permissions: ['token:read', 'token:use', 'token:read'],
      rules: [{ priority: 1, container: '/PCI/', transform: 'mask', permissions: ['token:read'] }],
    });
    const result = plan({
      desired: desired({ applications: [wanted] }),
      state: stateOf({ applications: { backend: { id: remote.id } } }),
      actual: actual({ applications: [remote] }),
    });
    expect(result.changes).toEqual([]);
  });

  test('an update lists each field that differs: code as a unified diff, configuration by key with no value', () => {
    const remote = remoteReactor('charge', {
      code: 'module.exports = async () => ({ raw: 0 });\n',
      configuration: { STRIPE_KEY: 'old', GONE: 'x', SAME: 's' },
    });
    const result = plan({
      desired: desired({
        reactors: [reactor('charge', { configuration: { STRIPE_KEY: SECRET, NEW: SECRET, SAME: 's' } })],
      }),
      state: stateOf({ reactors: { charge: { id: remote.id } } }),
      actual: actual({ reactors: [remote] }),
    });
    expect(result.changes).toHaveLength(1);
    const change = result.changes[0]!;
    expect(change).toMatchObject({ action: 'update', id: remote.id, address: 'reactors.charge' });
    expect(change.diffs).toEqual([
      {
        field: 'code',
        type: 'code',
        change: 'changed',
        path: 'reactors/charge.js',
        diff: '@@ -1,1 +1,1 @@\n-module.exports = async () => ({ raw: 0 });\n+module.exports = async () => ({ raw: 1 });',
      },
      { field: 'configuration.NEW', type: 'secret', change: 'added' },
      { field: 'configuration.STRIPE_KEY', type: 'secret', change: 'changed' },
      { field: 'configuration.GONE', type: 'secret', change: 'removed' },
    ]);
  });

  test('no configuration value, old or new, appears anywhere in a plan', () => {
    const remote = remoteProxy('stripe', { configuration: { TOKEN: 'old-secret-value' } });
    const result = plan({
      desired: desired({
        reactors: [reactor('charge', { configuration: { KEY: SECRET } })],
        proxies: [proxy('stripe', { configuration: { TOKEN: SECRET } })],
      }),
      state: stateOf({ proxies: { stripe: { id: remote.id } } }),
      actual: actual({ proxies: [remote] }),
    });
    const text = JSON.stringify(result);
    expect(result.changes.map((change) => change.address)).toEqual(['reactors.charge', 'proxies.stripe']);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('old-secret-value');
    expect(text).toContain('configuration.TOKEN');
  });

  test('a proxy with no configuration matches one with an empty map (the API keeps null)', () => {
    const remote = remoteProxy('stripe', { configuration: null });
    const result = plan({
      desired: desired({ proxies: [proxy('stripe', { configuration: {} })] }),
      state: stateOf({ proxies: { stripe: { id: remote.id } } }),
      actual: actual({ proxies: [remote] }),
    });
    expect(result.changes).toEqual([]);
  });

  test('references are by name: a reactor moving to another Application shows both names', () => {
    const old = remoteApp('old');
    const fresh = remoteApp('fresh');
    const remote = remoteReactor('charge', { application: old });
    const result = plan({
      desired: desired({
        applications: [app('old'), app('fresh')],
        reactors: [reactor('charge', { application: 'fresh' })],
      }),
      state: stateOf({
        applications: { old: { id: old.id }, fresh: { id: fresh.id } },
        reactors: { charge: { id: remote.id } },
      }),
      actual: actual({ applications: [old, fresh], reactors: [remote] }),
    });
    expect(result.changes).toEqual([
      expect.objectContaining({
        address: 'reactors.charge',
        action: 'update',
        diffs: [{ field: 'application', type: 'value', before: 'old', after: 'fresh' }],
        dependsOn: [],
      }),
    ]);
  });
});

describe('plan: identity, renames and adoption', () => {
  test('renamed_from renames the resource the state recorded under the old name (no delete and create)', () => {
    const remote = remoteReactor('charge');
    const result = plan({
      desired: desired({ reactors: [reactor('pay', { renamedFrom: 'charge' })] }),
      state: stateOf({ reactors: { charge: { id: remote.id } } }),
      actual: actual({ reactors: [remote] }),
    });
    expect(result.changes).toEqual([
      expect.objectContaining({
        action: 'rename',
        address: 'reactors.pay',
        from: 'charge',
        id: remote.id,
        diffs: [],
      }),
    ]);
    expect(result.orphans).toEqual([]);
  });

  test('renamed_from finds a resource svc never recorded by its old exact name (adopted and renamed)', () => {
    const remote = remoteProxy('legacy');
    const result = plan({
      desired: desired({ proxies: [proxy('stripe', { renamedFrom: 'legacy' })] }),
      state: emptyTargetState(),
      actual: actual({ proxies: [remote] }),
    });
    expect(result.changes).toEqual([
      expect.objectContaining({
        action: 'rename',
        from: 'legacy',
        adopted: true,
        id: remote.id,
      }),
    ]);
  });

  test('a resource svc did not create is adopted by its exact name: recorded, not created again', () => {
    const remote = remoteReactor('charge');
    const result = plan({
      desired: desired({ reactors: [reactor('charge')] }),
      state: emptyTargetState(),
      actual: actual({ reactors: [remote, remoteReactor('Charge')] }),
    });
    expect(result.changes).toEqual([
      expect.objectContaining({
        action: 'adopt',
        adopted: true,
        id: remote.id,
        diffs: [],
      }),
    ]);
  });

  test('an adopted resource that differs is an update', () => {
    const remote = remoteApp('backend', { permissions: ['token:read'] });
    const result = plan({
      desired: desired({ applications: [app('backend')] }),
      state: emptyTargetState(),
      actual: actual({ applications: [remote] }),
    });
    expect(result.changes).toEqual([
      expect.objectContaining({
        action: 'update',
        adopted: true,
        diffs: [{ field: 'permissions', type: 'value', before: ['token:read'], after: ['token:use'] }],
      }),
    ]);
  });

  test('two resources with the name and none in the state: an error naming both ids, with svc.yaml:line', () => {
    const [a, b] = [remoteReactor('charge'), remoteReactor('charge')];
    const attempt = () =>
      plan({
        desired: desired({ reactors: [reactor('charge')] }),
        state: emptyTargetState(),
        actual: actual({ reactors: [a, b] }),
      });
    expect(attempt).toThrow(ApplyError);
    expect(attempt).toThrow(
      `svc.yaml:8 reactors.charge: 2 reactors are named "charge" on the target (${a.id}, ${b.id})`,
    );
  });

  test('a state entry whose resource was deleted outside svc is forgotten, and the resource made again', () => {
    const result = plan({
      desired: desired({ reactors: [reactor('charge')] }),
      state: stateOf({ reactors: { charge: { id: nextId() } } }),
      actual: actual(),
    });
    expect(result.forgotten).toEqual(['reactors.charge']);
    expect(result.changes.map((change) => change.action)).toEqual(['create']);
  });

  test('a resource changed outside svc since the last apply is marked as drift', () => {
    const remote = remoteReactor('charge', { code: 'changed by hand' });
    const recorded = contentHash('reactors', reactorSpec(remoteReactor('charge')));
    const result = plan({
      desired: desired({ reactors: [reactor('charge')] }),
      state: stateOf({ reactors: { charge: { id: remote.id, hash: recorded } } }),
      actual: actual({ reactors: [remote] }),
    });
    expect(result.changes[0]).toMatchObject({ action: 'update', drift: true });
  });

  test("an Application's type cannot change in place: an error at its line", () => {
    const remote = remoteApp('backend', { type: 'public', permissions: ['token:create'] });
    expect(() =>
      plan({
        desired: desired({ applications: [app('backend')] }),
        state: stateOf({ applications: { backend: { id: remote.id } } }),
        actual: actual({ applications: [remote] }),
      }),
    ).toThrow(/^svc\.yaml:2 applications\.backend\.type: the Application on the target is public/);
  });

  test('the content hash of a resource covers configuration keys, not values', () => {
    const a = contentHash('reactors', reactorSpec(remoteReactor('x', { configuration: { K: 'one' } })));
    const b = contentHash('reactors', reactorSpec(remoteReactor('x', { configuration: { K: 'two' } })));
    const c = contentHash('reactors', reactorSpec(remoteReactor('x', { configuration: { L: 'one' } })));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
    expect(contentHash('applications', applicationSpec(remoteApp('x')))).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('plan: deletions and --prune', () => {
  const setup = () => {
    const kept = remoteApp('kept');
    const oldApp = remoteApp('old-app');
    const oldReactor = remoteReactor('old', { application: oldApp });
    const theirs = remoteReactor('not-svcs');
    return {
      kept,
      oldApp,
      oldReactor,
      input: {
        desired: desired({ applications: [app('kept')] }),
        state: stateOf({
          applications: { kept: { id: kept.id }, 'old-app': { id: oldApp.id } },
          reactors: { old: { id: oldReactor.id } },
        }),
        actual: actual({ applications: [kept, oldApp], reactors: [oldReactor, theirs] }),
      },
    };
  };

  test('without --prune nothing is deleted; what svc recorded and svc.yaml dropped is listed as orphans', () => {
    const { input } = setup();
    const result = plan(input);
    expect(result.changes).toEqual([]);
    expect(result.orphans).toEqual(['reactors.old', 'applications.old-app']);
  });

  test('with --prune only resources the state records are deleted, an Application after what used it', () => {
    const { input, oldApp, oldReactor } = setup();
    const result = plan({ ...input, options: { prune: true } });
    expect(result.changes).toEqual([
      expect.objectContaining({ action: 'delete', address: 'reactors.old', id: oldReactor.id, dependsOn: [] }),
      expect.objectContaining({
        action: 'delete',
        address: 'applications.old-app',
        id: oldApp.id,
        dependsOn: ['reactors.old'],
      }),
    ]);
  });

  test('the Application whose key svc uses is never deleted', () => {
    const { input, oldApp } = setup();
    const result = plan({ ...input, options: { prune: true, selfApplicationId: oldApp.id } });
    expect(result.changes.map((change) => change.address)).toEqual(['reactors.old']);
    expect(result.warnings).toEqual(['applications.old-app is the Application whose key svc is using: not deleted.']);
  });
});

describe('plan: --target', () => {
  test('only the named resource, and the Application it needs created', () => {
    const result = plan({
      desired: desired({
        applications: [app('backend'), app('other')],
        reactors: [reactor('charge', { application: 'backend' }), reactor('refund')],
      }),
      state: emptyTargetState(),
      actual: actual(),
      options: { targets: ['reactors.charge'] },
    });
    expect(result.changes.map((change) => change.address)).toEqual(['applications.backend', 'reactors.charge']);
  });

  test('an address that is not in svc.yaml is a usage error with a suggestion', () => {
    const attempt = () =>
      plan({
        desired: desired({ reactors: [reactor('charge')] }),
        state: emptyTargetState(),
        actual: actual(),
        options: { targets: ['reactors.charg'] },
      });
    expect(attempt).toThrow(
      /^--target reactors\.charg: no such resource in svc\.yaml \(did you mean reactors\.charge\?\)/,
    );
    try {
      attempt();
    } catch (error) {
      expect((error as ApplyError).exitCode).toBe(2);
    }
  });
});
