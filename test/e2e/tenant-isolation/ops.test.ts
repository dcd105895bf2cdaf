import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Ops area's routes (health, feature flags, the API description); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

describeTenantMatrix('Ops', tenants, {
  async GetHealth({ a, b }) {
    // Act
    const health = await api('/health', { apiKey: a.apiKey });

    // Assess: no tenant data at all
    expect(health.status).toBe(200);
    expect(Object.keys(health.body).sort()).toEqual(['dependencies', 'status', 'time']);
    expect(JSON.stringify(health.body)).not.toContain(b.projectId);
  },

  async GetFeatureFlags({ b, aMember, bMember }) {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { voice_messages: false } } });

    // Act
    const withA = await api('/client/feature-flags', { token: aMember });

    // Assess
    expect(withA.status).toBe(200);
    expect(withA.body).toMatchObject({ flagship: true, flags: { voice_messages: true } });
    expect((await api('/client/feature-flags', { token: bMember })).body.flags.voice_messages).toBe(false);
  },

  async GetProjectFeatureFlags({ b, aCallers }) {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { reply_suggestions: false } } });

    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/admin/feature-flags', auth)));

    // Assess
    for (const read of reads) expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { overrides: {} } });
  },

  async SetProjectFeatureFlags({ a, b, bMember, aCallers }) {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { embed_widget: true } } });

    // Act
    const sets = await Promise.all(
      aCallers().map(({ auth }) => api('/admin/feature-flags', { ...auth, method: 'PUT', body: { overrides: { embed_widget: false } } })),
    );

    // Assess
    for (const set of sets) expect(set.status).toBe(200);
    expect((await api('/admin/feature-flags', { apiKey: b.apiKey })).body).toEqual({ overrides: { embed_widget: true } });
    expect((await api('/client/feature-flags', { token: bMember })).body.flags.embed_widget).toBe(true);
    await api('/admin/feature-flags', { apiKey: a.apiKey, method: 'PUT', body: { overrides: {} } });
  },

  async GetOpenApi({ a, b, aMember }) {
    // Act: one document for everybody, whatever credentials come with the request
    const [anonymous, withKey, withToken] = await Promise.all([
      api('/openapi.json'),
      api('/openapi.json', { apiKey: a.apiKey }),
      api('/openapi.json', { token: aMember }),
    ]);

    // Assess
    expect(withKey.body).toEqual(anonymous.body);
    expect(withToken.body).toEqual(anonymous.body);
    expect(JSON.stringify(anonymous.body)).not.toContain(a.projectId);
    expect(JSON.stringify(anonymous.body)).not.toContain(b.projectId);
  },

  async GetApiReference({ a, b }) {
    // Act
    const page = await api('/docs', { apiKey: a.apiKey });

    // Assess
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(a.projectId);
    expect(page.body).not.toContain(b.projectId);
  },

  async GetApiReferenceScript({ a }) {
    // Act
    const [anonymous, withKey] = await Promise.all([api('/docs/scalar.js'), api('/docs/scalar.js', { apiKey: a.apiKey })]);

    // Assess
    expect(withKey.headers.get('etag')).toBe(anonymous.headers.get('etag'));
  },
});
