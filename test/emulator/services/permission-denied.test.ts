import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/emulator/errors.js';
import { lacking, PermissionDenied } from '../../../src/emulator/services/permission-denied.js';

describe('PermissionDenied', () => {
  it('is a 403 whose detail says what was denied, and carries it as a field', () => {
    const error = new PermissionDenied({ permission: 'token:create', containers: ['/pci/high/'] }, 'private');
    expect(error).toBeInstanceOf(HttpError);
    expect(error.status).toBe(403);
    expect(error.detail).toBe('This private Application lacks token:create on /pci/high/.');
    expect(error.denied).toEqual({ permission: 'token:create', containers: ['/pci/high/'] });
  });

  it('says what needs the permission, when told', () => {
    const error = new PermissionDenied({ permission: 'token:use' }, 'public', 'invoking a reactor');
    expect(error.detail).toBe('This public Application lacks token:use, which invoking a reactor needs.');
  });

  it('names the containers and the token of a refusal on one token', () => {
    expect(lacking({ permission: 'token:use', containers: ['/pci/', '/pii/'], token: 'abc' })).toBe(
      'lacks token:use on /pci/, /pii/ (token abc)',
    );
  });
});
