import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { marketplaceResultText, marketplaceSignature } from '../../support/marketplace';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the audit log: A's admins and API key read A's events only, and a
 * marketplace result names its project in the signed body, so one for A lands in A's log alone.
 * The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();

const eventsOf = async (auth: { token?: string; apiKey?: string }) =>
  (await api('/admin/audit/events?limit=100', auth)).body.events as { id: string; target: Record<string, unknown> }[];

describeTenantMatrix('Audit', tenants, {
  async ListAuditEvents({ a, b, aCallers }) {
    // A change in B, audited into B.
    const traceId = uniqueId('tenant-audit');
    const changed = await api('/admin/feature-flags', {
      method: 'PUT',
      apiKey: b.apiKey,
      headers: { 'x-trace-id': traceId },
      body: { overrides: { voice_messages: true } },
    });
    expect(changed.status).toBe(200);
    const bIds = new Set((await eventsOf({ apiKey: b.apiKey })).map((event) => event.id));
    expect(bIds.size).toBeGreaterThan(0);
    for (const { auth } of aCallers()) {
      const seen = await api('/admin/audit/events?limit=100', auth);
      expect(seen.status).toBe(200);
      expect(seen.body.events.filter((event: { id: string }) => bIds.has(event.id))).toEqual([]);
      expect(JSON.stringify(seen.body)).not.toContain(traceId);
    }
    expect(a.projectId).not.toBe(b.projectId);
  },

  async RecordMarketplaceAuditResult({ a, b }) {
    const subjectId = uniqueId('agt');
    const text = marketplaceResultText(a.projectId, subjectId);
    const stored = await api('/internal/marketplace/audit-result', {
      rawBody: text,
      headers: { 'content-type': 'application/json', 'x-service-signature': marketplaceSignature(text) },
    });
    expect(stored.status).toBe(201);
    const inA = (await eventsOf({ apiKey: a.apiKey })).filter((event) => event.target.subjectId === subjectId);
    const inB = (await eventsOf({ apiKey: b.apiKey })).filter((event) => event.target.subjectId === subjectId);
    expect([inA.length, inB.length]).toEqual([1, 0]);
  },
});
