import { describe, expect, it } from 'vitest';
import type { RuleTransform } from '../../../src/api/permissions.js';
import type { AccessRule } from '../../../src/api/types.js';
import {
  CONTAINER_PATTERN,
  evaluateAccess,
  evaluateTokenAccess,
  normalizeContainer,
} from '../../../src/emulator/services/access.js';

function rule(
  priority: number,
  container: string,
  permissions: string[],
  transform: RuleTransform = 'reveal',
): AccessRule {
  return { priority, container, permissions, transform };
}

describe('evaluateAccess', () => {
  it('takes rules in ascending priority whatever their order in the array', () => {
    const low = rule(1, '/pci/', ['token:read'], 'redact');
    const high = rule(5, '/', ['token:read'], 'reveal');
    for (const rules of [
      [low, high],
      [high, low],
    ]) {
      expect(evaluateAccess({ permissions: [], rules }, 'token:read', '/pci/')).toEqual({
        allowed: true,
        transform: 'redact',
        rule: low,
      });
      // Outside /pci/ only the broader rule covers the container.
      expect(evaluateAccess({ permissions: [], rules }, 'token:read', '/general/')).toEqual({
        allowed: true,
        transform: 'reveal',
        rule: high,
      });
    }
  });

  it('lets the first covering rule deny a permission it lacks, even if a later rule or plain permissions grant it', () => {
    const readOnly = rule(1, '/pci/', ['token:read'], 'mask');
    const everything = rule(2, '/', ['token:read', 'token:use'], 'reveal');
    const grantee = { permissions: ['token:use'], rules: [everything, readOnly] };

    expect(evaluateAccess(grantee, 'token:use', '/pci/')).toEqual({ allowed: false, rule: readOnly });
    expect(evaluateAccess(grantee, 'token:use', '/pci/high/')).toEqual({ allowed: false, rule: readOnly });
    expect(evaluateAccess(grantee, 'token:read', '/pci/')).toEqual({
      allowed: true,
      transform: 'mask',
      rule: readOnly,
    });
    expect(evaluateAccess(grantee, 'token:use', '/other/')).toEqual({
      allowed: true,
      transform: 'reveal',
      rule: everything,
    });
  });

  it('lets a covering rule deny what the plain permissions would grant', () => {
    const grantee = {
      permissions: ['token:read', 'token:delete'],
      rules: [rule(1, '/pci/', ['token:read'], 'redact')],
    };
    expect(evaluateAccess(grantee, 'token:delete', '/pci/')).toMatchObject({ allowed: false });
    // No rule covers /public/, so the plain permissions apply there.
    expect(evaluateAccess(grantee, 'token:delete', '/public/')).toEqual({ allowed: true, transform: 'reveal' });
  });

  it('treats a container as covering its sub-containers, not its parents', () => {
    const pci = { permissions: [], rules: [rule(1, '/pci/', ['token:read'])] };
    expect(evaluateAccess(pci, 'token:read', '/pci/')).toMatchObject({ allowed: true });
    expect(evaluateAccess(pci, 'token:read', '/pci/high/')).toMatchObject({ allowed: true });
    expect(evaluateAccess(pci, 'token:read', '/pci/high/x/')).toMatchObject({ allowed: true });
    expect(evaluateAccess(pci, 'token:read', '/')).toEqual({ allowed: false });
    expect(evaluateAccess(pci, 'token:read', '/pcix/')).toEqual({ allowed: false });

    const high = { permissions: [], rules: [rule(1, '/pci/high/', ['token:read'])] };
    expect(evaluateAccess(high, 'token:read', '/pci/high/')).toMatchObject({ allowed: true });
    expect(evaluateAccess(high, 'token:read', '/pci/')).toEqual({ allowed: false });
    expect(evaluateAccess(high, 'token:read', '/pci/low/')).toEqual({ allowed: false });

    const root = { permissions: [], rules: [rule(1, '/', ['token:read'])] };
    expect(evaluateAccess(root, 'token:read', '/')).toMatchObject({ allowed: true });
    expect(evaluateAccess(root, 'token:read', '/anything/deep/')).toMatchObject({ allowed: true });
  });

  it('falls back to plain permissions with the implicit transform when no rule covers the container', () => {
    const grantee = {
      permissions: ['token:read', 'token:use', 'token:create'],
      rules: [rule(1, '/pci/', ['token:read'], 'redact')],
    };
    expect(evaluateAccess(grantee, 'token:read', '/')).toEqual({ allowed: true, transform: 'mask' });
    expect(evaluateAccess(grantee, 'token:use', '/general/')).toEqual({ allowed: true, transform: 'reveal' });
    expect(evaluateAccess(grantee, 'token:create', '/general/')).toEqual({ allowed: true, transform: 'reveal' });
    expect(evaluateAccess({ permissions: ['token:read'], rules: [] }, 'token:read', '/pci/')).toEqual({
      allowed: true,
      transform: 'mask',
    });
  });

  it('denies when neither a rule nor a plain permission grants', () => {
    expect(evaluateAccess({ permissions: [], rules: [] }, 'token:read', '/')).toEqual({ allowed: false });
    expect(evaluateAccess({ permissions: ['token:read'], rules: [] }, 'token:use', '/')).toEqual({ allowed: false });
    expect(
      evaluateAccess({ permissions: [], rules: [rule(1, '/pci/', ['token:read'])] }, 'token:read', '/other/'),
    ).toEqual({
      allowed: false,
    });
  });

  it('carries each transform of the deciding rule through', () => {
    for (const transform of ['redact', 'mask', 'reveal'] as const) {
      const decided = rule(3, '/vault/', ['token:read', 'token:use'], transform);
      for (const permission of ['token:read', 'token:use']) {
        expect(evaluateAccess({ permissions: ['token:read'], rules: [decided] }, permission, '/vault/a/')).toEqual({
          allowed: true,
          transform,
          rule: decided,
        });
      }
    }
  });

  it('skips rules without a container (session-style conditions)', () => {
    const conditional: AccessRule = { priority: 0, transform: 'reveal', permissions: ['token:use'], conditions: [] };
    const grantee = { permissions: ['token:read'], rules: [conditional] };
    expect(evaluateAccess(grantee, 'token:use', '/')).toEqual({ allowed: false });
    expect(evaluateAccess(grantee, 'token:read', '/')).toEqual({ allowed: true, transform: 'mask' });
  });

  it('does not reorder the grantee rules', () => {
    const rules = [rule(9, '/', ['token:read']), rule(1, '/pci/', ['token:read'])];
    evaluateAccess({ permissions: [], rules }, 'token:read', '/pci/');
    expect(rules.map((r) => r.priority)).toEqual([9, 1]);
  });
});

describe('CONTAINER_PATTERN', () => {
  it.each(['/', '/pci/', '/pci/high/', '/a-b_c/0/'])('accepts %s', (container) => {
    expect(CONTAINER_PATTERN.test(container)).toBe(true);
  });

  it.each(['pci/', '/pci', '//', '/a b/', '', '/pci//', '/PCI/', '/pci/high'])('rejects %j', (container) => {
    expect(CONTAINER_PATTERN.test(container)).toBe(false);
  });

  it('accepts upper-case containers once normalised', () => {
    expect(normalizeContainer('/PCI/High/')).toBe('/pci/high/');
    expect(CONTAINER_PATTERN.test(normalizeContainer('/PCI/High/'))).toBe(true);
  });
});

describe('evaluateTokenAccess', () => {
  it('allows when any of the containers allows', () => {
    const pci = rule(1, '/pci/', ['token:use'], 'reveal');
    const grantee = { permissions: [], rules: [pci] };
    for (const containers of [['/pci/high/'], ['/general/', '/pci/high/'], ['/pci/high/', '/general/']]) {
      expect(evaluateTokenAccess(grantee, 'token:use', containers)).toEqual({
        allowed: true,
        transform: 'reveal',
        rule: pci,
      });
    }
    expect(evaluateTokenAccess(grantee, 'token:use', ['/general/'])).toEqual({ allowed: false });
  });

  it('allows through one container even when a rule on another container denies', () => {
    const deny = rule(1, '/pci/', ['token:read'], 'mask');
    const grantee = { permissions: ['token:use'], rules: [deny] };
    expect(evaluateAccess(grantee, 'token:use', '/pci/')).toMatchObject({ allowed: false });
    // No rule covers /general/, so the plain token:use permission applies there.
    expect(evaluateTokenAccess(grantee, 'token:use', ['/pci/', '/general/'])).toEqual({
      allowed: true,
      transform: 'reveal',
    });
  });

  it('picks the most revealing transform among the allowing containers (reveal > mask > redact)', () => {
    const redact = rule(1, '/a/', ['token:read'], 'redact');
    const mask = rule(2, '/b/', ['token:read'], 'mask');
    const reveal = rule(3, '/c/', ['token:read'], 'reveal');
    const grantee = { permissions: [], rules: [redact, mask, reveal] };

    const orders = [
      ['/a/', '/b/', '/c/'],
      ['/c/', '/b/', '/a/'],
      ['/b/', '/c/', '/a/'],
    ];
    for (const containers of orders) {
      expect(evaluateTokenAccess(grantee, 'token:read', containers)).toEqual({
        allowed: true,
        transform: 'reveal',
        rule: reveal,
      });
    }
    for (const containers of [
      ['/a/', '/b/'],
      ['/b/', '/a/'],
    ]) {
      expect(evaluateTokenAccess(grantee, 'token:read', containers)).toEqual({
        allowed: true,
        transform: 'mask',
        rule: mask,
      });
    }
    expect(evaluateTokenAccess(grantee, 'token:read', ['/a/'])).toEqual({
      allowed: true,
      transform: 'redact',
      rule: redact,
    });
  });

  it('compares rule transforms with the implicit transform of plain permissions', () => {
    // Plain token:read gives mask where no rule covers the container; a reveal rule elsewhere beats it.
    const reveal = rule(1, '/open/', ['token:read'], 'reveal');
    const redact = rule(2, '/closed/', ['token:read'], 'redact');
    const grantee = { permissions: ['token:read'], rules: [reveal, redact] };
    expect(evaluateTokenAccess(grantee, 'token:read', ['/general/', '/open/'])).toEqual({
      allowed: true,
      transform: 'reveal',
      rule: reveal,
    });
    expect(evaluateTokenAccess(grantee, 'token:read', ['/closed/', '/general/'])).toEqual({
      allowed: true,
      transform: 'mask',
    });
    expect(evaluateTokenAccess(grantee, 'token:read', ['/closed/'])).toEqual({
      allowed: true,
      transform: 'redact',
      rule: redact,
    });
  });

  it('ignores a more revealing rule that lacks the permission', () => {
    const reveal = rule(1, '/a/', ['token:use'], 'reveal');
    const redact = rule(2, '/b/', ['token:read'], 'redact');
    const grantee = { permissions: [], rules: [reveal, redact] };
    expect(evaluateTokenAccess(grantee, 'token:read', ['/a/', '/b/'])).toEqual({
      allowed: true,
      transform: 'redact',
      rule: redact,
    });
  });

  it('denies when no container allows', () => {
    const grantee = { permissions: [], rules: [rule(1, '/pci/', ['token:read'], 'reveal')] };
    expect(evaluateTokenAccess(grantee, 'token:use', ['/pci/', '/pci/high/'])).toMatchObject({ allowed: false });
    expect(evaluateTokenAccess(grantee, 'token:read', ['/general/', '/bank/'])).toEqual({ allowed: false });
    expect(evaluateTokenAccess({ permissions: [], rules: [] }, 'token:read', ['/'])).toEqual({ allowed: false });
  });

  it('denies a token with no containers', () => {
    expect(evaluateTokenAccess({ permissions: ['token:read'], rules: [] }, 'token:read', [])).toEqual({
      allowed: false,
    });
  });

  it('agrees with evaluateAccess for a single container', () => {
    const grantee = {
      permissions: ['token:read'],
      rules: [rule(1, '/pci/', ['token:read'], 'redact'), rule(2, '/', ['token:use'], 'mask')],
    };
    for (const permission of ['token:read', 'token:use', 'token:delete']) {
      for (const container of ['/', '/pci/', '/pci/high/', '/general/']) {
        const single = evaluateAccess(grantee, permission, container);
        const token = evaluateTokenAccess(grantee, permission, [container]);
        expect(token.allowed, `${permission} on ${container}`).toBe(single.allowed);
        if (single.allowed) expect(token).toEqual(single);
      }
    }
  });
});
