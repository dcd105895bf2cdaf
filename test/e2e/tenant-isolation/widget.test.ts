import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Widget area's routes; the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

describeTenantMatrix('Widget', tenants, {
  async GetEmbedScript({ a, b }) {
    // Prepare: B turns its widget off
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { embed_widget: false } } });

    // Act
    const forA = await api(`/embed.js?projectId=${a.projectId}`);
    const forB = await api(`/embed.js?projectId=${b.projectId}`);

    // Assess: B's switch is B's alone, and the script names no tenant
    expect(forA.status).toBe(200);
    expect(forA.body).not.toContain(a.projectId);
    expect({ status: forB.status, code: forB.body?.error?.code }).toEqual({ status: 403, code: 'feature_disabled' });
  },
});
