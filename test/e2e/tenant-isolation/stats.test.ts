import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Stats area's routes (figures, score, alerts, objectives); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

/** Gives project B traffic of its own: a room and a message, which its figures count. */
async function busyB(apiKey: string) {
  const roomId = uniqueId('room');
  await api('/rooms', { apiKey, body: { id: roomId, type: 'group', members: [] } });
  await api('/messages', { apiKey, body: { roomId, content: 'counted in B only', userId: uniqueId('user') } });
}

describeTenantMatrix('Stats', tenants, {
  async GetOpsStats({ b, aCallers }) {
    // Prepare
    await busyB(b.apiKey);

    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/stats/ops?minutes=60', auth)));

    // Assess: A's figures only, and none of B's messages
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.totals.messages ?? 0).toBe(0);
      expect(JSON.stringify(read.body)).not.toContain(b.projectId);
    }
  },

  async GetSloStats({ b, aCallers }) {
    // Prepare
    await api('/admin/stats/objectives', { apiKey: b.apiKey, method: 'PUT', body: { availability: 0.91, latencyP95Ms: 70 } });

    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/stats/slo?minutes=60', auth)));

    // Assess: B's objectives do not judge A
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.objectives).not.toEqual({ availability: 0.91, latencyP95Ms: 70 });
    }
  },

  async ListStatsAlerts({ b, aCallers }) {
    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/stats/alerts', auth)));

    // Assess
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(b.projectId);
    }
  },

  async GetStatsObjectives({ b, aCallers }) {
    // Prepare
    await api('/admin/stats/objectives', { apiKey: b.apiKey, method: 'PUT', body: { availability: 0.92, latencyP95Ms: 80 } });

    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/admin/stats/objectives', auth)));

    // Assess
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.objectives).not.toEqual({ availability: 0.92, latencyP95Ms: 80 });
    }
  },

  async PutStatsObjectives({ a, b, aCallers }) {
    // Prepare
    await api('/admin/stats/objectives', { apiKey: b.apiKey, method: 'PUT', body: { availability: 0.93, latencyP95Ms: 90 } });

    // Act
    const sets = await Promise.all(
      aCallers().map(({ auth }) =>
        api('/admin/stats/objectives', { ...auth, method: 'PUT', body: { availability: 0.97, latencyP95Ms: 300 } }),
      ),
    );

    // Assess: only A's objectives changed
    for (const set of sets) expect(set.status).toBe(200);
    expect((await api('/admin/stats/objectives', { apiKey: b.apiKey })).body.objectives).toEqual({ availability: 0.93, latencyP95Ms: 90 });
    expect((await api('/admin/stats/objectives', { apiKey: a.apiKey })).body.objectives).toEqual({ availability: 0.97, latencyP95Ms: 300 });
  },
});
