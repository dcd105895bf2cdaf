import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on calls and voice latencies: A's users get no call token for B's
 * rooms (404, the shared user id included), and A's samples and statistics are A's alone. The
 * matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();

beforeAll(async () => {
  await api('/admin/voice-ai/metrics', { apiKey: tenants().b.apiKey, body: { kind: 'barge_in', latencyMs: 350 } });
});

const bStats = async () => (await api('/admin/voice-ai/stats?window=10m', { apiKey: tenants().b.apiKey })).body.kinds;

describeTenantMatrix('Calls', tenants, {
  async CreateCallToken({ aUsers, bRooms }) {
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api('/admin/calls/token', { token, body: { roomId } }) })),
      ),
    );
  },
  async RecordVoiceAiMetrics({ aCallers }) {
    const before = await bStats();
    for (const { auth } of aCallers()) {
      expect((await api('/admin/voice-ai/metrics', { ...auth, body: { kind: 'realtime', latencyMs: 100 } })).status).toBe(200);
    }
    expect(await bStats()).toEqual(before);
  },
  async GetVoiceAiStats({ aCallers }) {
    for (const { auth } of aCallers()) {
      const stats = await api('/admin/voice-ai/stats?window=10m', auth);
      expect(stats.body.kinds.barge_in.count).toBe(0);
    }
    expect((await bStats()).barge_in.count).toBe(1);
  },
});
