import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { bridgeBodies, createSlackBridge } from '../../support/bridges';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the bridges: A's admin and API key neither see, change nor remove
 * B's bridges, cannot link B's rooms to a channel of theirs, and an id of B's bridge is no bridge
 * of A's. The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();
let bBridge: any;

beforeAll(async () => {
  bBridge = await createSlackBridge(tenants().b.apiKey, tenants().bRoomId);
});

const bBridges = async () => (await api('/admin/bridges', { apiKey: tenants().b.apiKey })).body.bridges as any[];

describeTenantMatrix('Bridges', tenants, {
  async CreateBridge({ aCallers, bRooms }) {
    const before = await bBridges();
    for (const { auth } of aCallers()) {
      // B's rooms do not exist for A: no bridge of A's may relay them.
      await expectAllNotFound(
        bRooms().map((roomId) => ({ label: roomId, call: () => api('/admin/bridges', { ...auth, body: bridgeBodies.slack(roomId) }) })),
      );
    }
    expect(await bBridges()).toEqual(before);
  },

  async ListBridges({ a, aCallers }) {
    await createSlackBridge(a.apiKey, tenants().aRoomId);
    for (const { auth } of aCallers()) {
      const listed = await api('/admin/bridges', auth);
      expect(listed.status).toBe(200);
      expect(listed.body.bridges.length).toBeGreaterThan(0);
      expect(listed.body.bridges.every((bridge: any) => bridge.id.startsWith(`br_${a.projectId}_`))).toBe(true);
    }
  },

  async GetBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/admin/bridges/${bBridge.id}`, auth) })),
      'bridge_not_found',
    );
  },

  async UpdateBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () =>
          api(`/admin/bridges/${bBridge.id}`, { ...auth, method: 'PATCH', body: { channelId: 'CSTOLEN1', botToken: 'xoxb-stolen' } }),
      })),
      'bridge_not_found',
    );
    expect((await bBridges()).find((bridge) => bridge.id === bBridge.id)).toEqual(bBridge);
  },

  async DeleteBridge({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/admin/bridges/${bBridge.id}`, { ...auth, method: 'DELETE' }) })),
      'bridge_not_found',
    );
    expect((await bBridges()).map((bridge) => bridge.id)).toContain(bBridge.id);
  },
});
