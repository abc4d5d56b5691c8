import { describe, expect, it } from 'vitest';
import { PERMISSIONS_BY_TYPE, type ApplicationType } from '../../../src/api/permissions.js';
import type { AccessRule } from '../../../src/api/types.js';
import { HttpError } from '../../../src/emulator/errors.js';
import { checkGrants, type Grants } from '../../../src/emulator/services/grants.js';

function rule(overrides: Partial<AccessRule> = {}): AccessRule {
  return { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'], ...overrides };
}

/** The HttpError checkGrants throws, with its field map. */
function failure(type: ApplicationType, grants: Grants): { error: HttpError; errors: Record<string, string[]> } {
  let thrown: unknown;
  try {
    checkGrants(type, grants);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(HttpError);
  const error = thrown as HttpError;
  expect(error.status).toBe(400);
  expect(error.errors).toBeDefined();
  return { error, errors: error.errors! };
}

describe('checkGrants rejects', () => {
  it('an unknown permission, naming its index', () => {
    const { error, errors } = failure('private', { permissions: ['token:read', 'token:fly'], rules: [] });
    expect(Object.keys(errors)).toEqual(['permissions[1]']);
    expect(errors['permissions[1]']![0]).toContain('"token:fly" is not a known permission');
    expect(error.message).toContain('permissions[1]');

    const first = failure('management', { permissions: ['nope'], rules: [] });
    expect(Object.keys(first.errors)).toEqual(['permissions[0]']);
    expect(first.errors['permissions[0]']![0]).toContain('not a known permission');
  });

  it.each([
    ['management', 'token:read'],
    ['public', 'token:read'],
    ['public', 'token:use'],
    ['private', 'application:create'],
    ['public', 'reactor:read'],
  ] as const)('a permission not allowed for the type (%s, %s)', (type, permission) => {
    const { errors } = failure(type, { permissions: [permission], rules: [] });
    expect(Object.keys(errors)).toEqual(['permissions[0]']);
    expect(errors['permissions[0]']![0]).toContain(`"${permission}" is not allowed for a ${type} Application`);
  });

  it.each(['management', 'private', 'public'] as const)('empty permissions and rules (%s)', (type) => {
    const { errors } = failure(type, { permissions: [], rules: [] });
    expect(errors.permissions![0]).toContain('at least one of permissions or rules');
  });

  it('rules on a management Application', () => {
    const { errors } = failure('management', {
      permissions: ['application:read'],
      rules: [rule({ permissions: ['application:read'] })],
    });
    expect(errors.rules![0]).toContain('only for private and public Applications, not management');
  });

  it.each(['private', 'public'] as const)('a rule without container on a %s Application', (type) => {
    const { container: _container, ...withoutContainer } = rule({ permissions: ['token:create'] });
    const { errors } = failure(type, { permissions: [], rules: [withoutContainer] });
    expect(Object.keys(errors)).toEqual(['rules[0].container']);
    expect(errors['rules[0].container']![0]).toContain(`required for ${type} Applications`);
  });

  it.each(['pci/', '/pci', '//', '/a b/', 'pci', '', '/pci//x/'])('container %j', (container) => {
    const { errors } = failure('private', { permissions: [], rules: [rule({ container })] });
    expect(Object.keys(errors)).toEqual(['rules[0].container']);
    expect(errors['rules[0].container']![0]).toContain('must start and end with "/"');
  });

  it('container and conditions together', () => {
    const { errors } = failure('private', {
      permissions: [],
      rules: [rule({ conditions: [{ attribute: 'container', operator: 'starts_with', value: '/pci/' }] })],
    });
    expect(Object.keys(errors)).toEqual(['rules[0].conditions']);
    expect(errors['rules[0].conditions']![0]).toContain('mutually exclusive');
  });

  it('conditions without a container', () => {
    const { container: _container, ...withoutContainer } = rule();
    const { errors } = failure('private', {
      permissions: [],
      rules: [{ ...withoutContainer, conditions: [{ attribute: 'id', operator: 'equals', value: 'x' }] }],
    });
    expect(errors['rules[0].conditions']![0]).toContain('scope an Application rule with container');
    expect(errors['rules[0].container']![0]).toContain('required');
  });

  it('a duplicate priority, naming the rule that used it first', () => {
    const { errors } = failure('private', {
      permissions: [],
      rules: [rule({ priority: 1 }), rule({ priority: 2, container: '/a/' }), rule({ priority: 1, container: '/b/' })],
    });
    expect(Object.keys(errors)).toEqual(['rules[2].priority']);
    expect(errors['rules[2].priority']![0]).toBe('1 is already used by rules[0]');
  });

  it('a rule permission unknown or not allowed for the type', () => {
    const { errors } = failure('public', {
      permissions: ['token:create'],
      rules: [rule({ permissions: ['token:create', 'token:read', 'token:fly'] })],
    });
    expect(Object.keys(errors).sort()).toEqual(['rules[0].permissions[1]', 'rules[0].permissions[2]']);
    expect(errors['rules[0].permissions[1]']![0]).toContain('"token:read" is not allowed for a public Application');
    expect(errors['rules[0].permissions[2]']![0]).toContain('not a known permission');
  });

  it('with every problem found, not just the first', () => {
    const { error, errors } = failure('private', {
      permissions: ['token:read', 'proxy:read', 'bogus'],
      rules: [rule({ priority: 1, container: 'nope' }), rule({ priority: 1, permissions: ['reactor:create'] })],
    });
    expect(Object.keys(errors).sort()).toEqual([
      'permissions[1]',
      'permissions[2]',
      'rules[0].container',
      'rules[1].permissions[0]',
      'rules[1].priority',
    ]);
    expect(error.message).toContain('(and 4 more)');
  });
});

describe('checkGrants accepts', () => {
  it.each(['management', 'private', 'public'] as const)('every permission allowed for a %s Application', (type) => {
    const permissions = [...PERMISSIONS_BY_TYPE[type]];
    expect(checkGrants(type, { permissions, rules: [] })).toEqual({ permissions, rules: [] });
  });

  it('management permissions over applications, proxies and reactors', () => {
    const permissions = [
      'application:create',
      'application:read',
      'proxy:update',
      'proxy:delete',
      'reactor:create',
      'reactor:read',
    ];
    expect(checkGrants('management', { permissions, rules: [] }).permissions).toEqual(permissions);
    expect(PERMISSIONS_BY_TYPE.management).toHaveLength(12);
  });

  it('the token permissions of a private and a public Application', () => {
    const priv = ['token:create', 'token:read', 'token:update', 'token:delete', 'token:use'];
    expect(checkGrants('private', { permissions: priv, rules: [] }).permissions).toEqual(priv);
    expect(checkGrants('public', { permissions: ['token:create', 'token:update'], rules: [] }).permissions).toEqual([
      'token:create',
      'token:update',
    ]);
  });

  it('rules alone, with distinct priorities', () => {
    const rules = [rule({ priority: 2 }), rule({ priority: 1, container: '/', transform: 'redact' })];
    expect(checkGrants('private', { permissions: [], rules })).toEqual({ permissions: [], rules });
    expect(
      checkGrants('public', { permissions: [], rules: [rule({ permissions: ['token:create'] })] }).rules,
    ).toHaveLength(1);
  });

  it('lower-cases containers and drops duplicate permissions', () => {
    const result = checkGrants('private', {
      permissions: ['token:read', 'token:use', 'token:read'],
      rules: [rule({ container: '/PCI/High/', permissions: ['token:read', 'token:read', 'token:use'] })],
    });
    expect(result.permissions).toEqual(['token:read', 'token:use']);
    expect(result.rules[0]).toEqual(rule({ container: '/pci/high/', permissions: ['token:read', 'token:use'] }));
  });

  it('does not change the grants it was given', () => {
    const grants: Grants = { permissions: ['token:read', 'token:read'], rules: [rule({ container: '/PCI/' })] };
    checkGrants('private', grants);
    expect(grants).toEqual({ permissions: ['token:read', 'token:read'], rules: [rule({ container: '/PCI/' })] });
  });
});
