import { describe, expect, it } from 'vitest';
import type { AccessRule } from '../../src/api/types.js';
import { createApplicationBody, parseRules, updateApplicationBody } from '../../src/requests/applications.js';
import { InvalidInputError } from '../../src/requests/errors.js';

const rule: AccessRule = { priority: 1, container: '/pci/', transform: 'mask', permissions: ['token:read'] };

describe('createApplicationBody', () => {
  it('grants no permission when none is given, and leaves rules and expiry out', () => {
    const body = createApplicationBody({ name: 'backend', type: 'private' });
    expect(body).toEqual({ name: 'backend', type: 'private', permissions: [] });
  });

  it('carries every field given, the expiry as expires_at', () => {
    const body = createApplicationBody({
      name: 'reader',
      type: 'private',
      permissions: ['token:read'],
      rules: [rule],
      expiresAt: '2031-01-01T00:00:00Z',
    });
    expect(body).toEqual({
      name: 'reader',
      type: 'private',
      permissions: ['token:read'],
      rules: [rule],
      expires_at: '2031-01-01T00:00:00Z',
    });
  });
});

describe('updateApplicationBody', () => {
  it('keeps the current name (the API requires one) and leaves out what is not given', () => {
    const body = updateApplicationBody({ name: 'old' }, { permissions: ['token:create'] });
    expect(body).toEqual({ name: 'old', permissions: ['token:create'] });
  });

  it('replaces the name, permissions and rules given', () => {
    const body = updateApplicationBody({ name: 'old' }, { name: 'new', permissions: [], rules: [rule] });
    expect(body).toEqual({ name: 'new', permissions: [], rules: [rule] });
  });
});

describe('parseRules', () => {
  it('takes one rule per text, or several as an array, in order', () => {
    const second = { ...rule, priority: 2 };
    expect(parseRules([JSON.stringify(rule), JSON.stringify([second, rule])], '--rule')).toEqual([rule, second, rule]);
  });

  it('refuses text that is not JSON, naming the input', () => {
    expect(() => parseRules(['{bad'], '--rule')).toThrow(InvalidInputError);
    expect(() => parseRules(['{bad'], '--rule')).toThrow(/^--rule must be JSON, e\.g\. '\{"priority":1/);
  });

  it.each(['42', '"x"', 'null'])('refuses %s, which is JSON but no rule', (text) => {
    const expected = new InvalidInputError('rules must be a JSON object (one rule) or an array of rules.');
    expect(() => parseRules([text], 'rules')).toThrow(expected);
  });
});
