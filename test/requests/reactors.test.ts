import { describe, expect, it } from 'vitest';
import type { Application, Reactor } from '../../src/api/types.js';
import { createReactorBody, patchReactorBody, updateReactorBody } from '../../src/requests/reactors.js';

const application: Application = {
  id: 'app-1',
  tenant_id: 't',
  name: 'backend',
  type: 'private',
  permissions: [],
  rules: [],
};
const current: Reactor = {
  id: 'r-1',
  tenant_id: 't',
  name: 'charge',
  code: 'module.exports = async () => 1;',
  configuration: { A: '1' },
  application,
  created_at: '2026-01-01T00:00:00Z',
  modified_at: '2026-01-01T00:00:00Z',
};

describe('createReactorBody', () => {
  it('sends an empty configuration and no Application when none is given', () => {
    expect(createReactorBody({ name: 'charge', code: 'x' })).toEqual({ name: 'charge', code: 'x', configuration: {} });
  });

  it('binds the Application by id', () => {
    expect(createReactorBody({ name: 'charge', code: 'x', configuration: { A: '1' }, applicationId: 'app-2' })).toEqual(
      {
        name: 'charge',
        code: 'x',
        configuration: { A: '1' },
        application: { id: 'app-2' },
      },
    );
  });
});

describe('updateReactorBody', () => {
  it('keeps every current value when nothing is given', () => {
    expect(updateReactorBody(current, {})).toEqual({
      name: 'charge',
      code: current.code,
      configuration: { A: '1' },
      application: { id: 'app-1' },
    });
  });

  it('replaces what is given; a configuration given replaces the whole map', () => {
    expect(
      updateReactorBody(current, { name: 'refund', code: 'y', configuration: { B: '2' }, applicationId: 'app-2' }),
    ).toEqual({
      name: 'refund',
      code: 'y',
      configuration: { B: '2' },
      application: { id: 'app-2' },
    });
  });

  it('unbinds the Application with null, and keeps "none" as none', () => {
    expect(updateReactorBody(current, { applicationId: null }).application).toBeNull();
    expect(updateReactorBody({ ...current, application: null }, {}).application).toBeNull();
  });

  it('sends an empty code when empty code is given (empty is a value, not "not given")', () => {
    expect(updateReactorBody(current, { code: '' }).code).toBe('');
  });
});

describe('patchReactorBody', () => {
  it('is empty when nothing is given', () => {
    expect(patchReactorBody({})).toEqual({});
  });

  it('carries only what is given, null unbinding the Application', () => {
    expect(patchReactorBody({ code: 'y', configuration: { A: null, B: '2' }, applicationId: null })).toEqual({
      code: 'y',
      configuration: { A: null, B: '2' },
      application: null,
    });
    const renamed = patchReactorBody({ name: 'refund', applicationId: 'app-2' });
    expect(renamed).toEqual({ name: 'refund', application: { id: 'app-2' } });
  });
});
