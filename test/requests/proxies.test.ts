import { describe, expect, it } from 'vitest';
import type { Proxy } from '../../src/api/types.js';
import { createProxyBody, patchProxyBody, updateProxyBody } from '../../src/requests/proxies.js';

const current: Proxy = {
  id: 'p-1',
  tenant_id: 't',
  name: 'stripe',
  key: 'proxy_local_x',
  destination_url: 'https://api.example.com',
  request_transform: { code: 'req' },
  response_transform: null,
  application_id: 'app-1',
  configuration: { A: '1' },
  require_auth: true,
  created_at: '2026-01-01T00:00:00Z',
  modified_at: '2026-01-01T00:00:00Z',
};

describe('createProxyBody', () => {
  it('sends only the name and destination when nothing else is given (the API defaults the rest)', () => {
    expect(createProxyBody({ name: 'stripe', destinationUrl: 'https://api.example.com' })).toEqual({
      name: 'stripe',
      destination_url: 'https://api.example.com',
    });
  });

  it('wraps transform code, binds the Application by id and carries require_auth false', () => {
    const body = createProxyBody({
      name: 'stripe',
      destinationUrl: 'https://api.example.com',
      requestTransform: 'req',
      responseTransform: 'res',
      configuration: { A: '1' },
      applicationId: 'app-1',
      requireAuth: false,
    });
    expect(body).toEqual({
      name: 'stripe',
      destination_url: 'https://api.example.com',
      request_transform: { code: 'req' },
      response_transform: { code: 'res' },
      configuration: { A: '1' },
      application: { id: 'app-1' },
      require_auth: false,
    });
  });
});

describe('updateProxyBody', () => {
  it('keeps every current value when nothing is given', () => {
    expect(updateProxyBody(current, {})).toEqual({
      name: 'stripe',
      destination_url: 'https://api.example.com',
      request_transform: { code: 'req' },
      response_transform: null,
      application: { id: 'app-1' },
      configuration: { A: '1' },
      require_auth: true,
    });
  });

  it('removes a transform and unbinds the Application with null, sets what is given', () => {
    const body = updateProxyBody(current, {
      requestTransform: null,
      responseTransform: 'res',
      applicationId: null,
      configuration: { B: '2' },
      requireAuth: false,
      destinationUrl: 'https://other.example.com',
    });
    expect(body).toMatchObject({
      name: 'stripe',
      destination_url: 'https://other.example.com',
      request_transform: null,
      response_transform: { code: 'res' },
      application: null,
      configuration: { B: '2' },
      require_auth: false,
    });
  });

  it('keeps a proxy without Application or configuration as it is', () => {
    const bare = { ...current, application_id: null, configuration: null };
    expect(updateProxyBody(bare, { name: 'renamed' })).toMatchObject({
      name: 'renamed',
      application: null,
      configuration: null,
    });
  });
});

describe('patchProxyBody', () => {
  it('is empty when nothing is given', () => {
    expect(patchProxyBody({})).toEqual({});
  });

  it('carries only what is given, with null for what is removed', () => {
    expect(patchProxyBody({ responseTransform: null, configuration: { A: null }, requireAuth: false })).toEqual({
      response_transform: null,
      configuration: { A: null },
      require_auth: false,
    });
    expect(patchProxyBody({ requestTransform: 'req', applicationId: 'app-2' })).toEqual({
      request_transform: { code: 'req' },
      application: { id: 'app-2' },
    });
  });
});
