import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';
import { createPusherApp, type PusherAppKeys, sendSignedTrigger } from '../../support/pusher';
import { settle } from '../../support/realtime-suite';
import { connectWelcomed } from '../../support/ws';

/**
 * Project A against project B on Pusher compatibility: A's admin and API key change and read A's
 * app only; A's users get no auth for B's rooms' channels (they do not exist for A); what A's app
 * signs triggers nothing in B, neither on B's app id nor with B's room ids on A's own app. The
 * matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();
const apps = { a: {} as PusherAppKeys, b: {} as PusherAppKeys };

beforeAll(async () => {
  apps.a = await createPusherApp(tenants().a.apiKey);
  apps.b = await createPusherApp(tenants().b.apiKey);
});

const bApp = async () => (await api('/admin/pusher-app', { apiKey: tenants().b.apiKey })).body;

/** B's member watches B's room while `attempt` runs; nothing may reach it. */
async function expectNothingInB(attempt: () => Promise<void>) {
  const { bRoomId, bMember } = tenants();
  const socket = await connectWelcomed(bRoomId, bMember, { history: 0 });
  try {
    await attempt();
    await settle(socket);
    expect(socket.ofType('event')).toEqual([]);
  } finally {
    await socket.close();
  }
}

describeTenantMatrix('Pusher', tenants, {
  async PutPusherApp({ aCallers }) {
    const before = await bApp();
    for (const { auth } of aCallers()) {
      const rotated = await api('/admin/pusher-app', { ...auth, method: 'POST' });
      expect(rotated.status).toBe(201);
      expect(rotated.body.appId).not.toBe(before.appId);
      apps.a = rotated.body;
    }
    expect(await bApp()).toEqual(before);
  },

  async GetPusherApp({ aCallers }) {
    const b = await bApp();
    for (const { auth } of aCallers()) {
      const read = await api('/admin/pusher-app', auth);
      expect(read.status).toBe(200);
      expect([read.body.appId, read.body.key]).not.toContain(b.key);
      expect(read.body.appId).not.toBe(b.appId);
    }
  },

  async AuthorizeChannel({ aUsers, bRooms }) {
    for (const { token } of aUsers()) {
      await expectAllNotFound(
        bRooms().flatMap((roomId) =>
          ['private-room-', 'presence-room-'].map((prefix) => ({
            label: `${prefix}${roomId}`,
            call: () => api('/auth/channel', { token, body: { socket_id: '1.2', channel_name: `${prefix}${roomId}` } }),
          })),
        ),
      );
    }
  },

  async PusherTriggerEvents({ bRoomId }) {
    const body = JSON.stringify({ name: 'from-a', data: '{}', channel: `private-room-${bRoomId}` });
    await expectNothingInB(async () => {
      // A's key and secret on B's app id: refused.
      const onB = await sendSignedTrigger(apps.a, 'events', body, { appId: apps.b.appId });
      // A's own app naming B's room: a room A's project does not have, skipped.
      const onA = await sendSignedTrigger(apps.a, 'events', body);
      expect({ status: onB.status, code: onB.body?.error?.code }).toEqual({ status: 401, code: 'invalid_pusher_signature' });
      expect({ status: onA.status, body: onA.body }).toEqual({ status: 200, body: {} });
    });
  },

  async PusherTriggerBatchEvents({ bRoomId }) {
    const body = JSON.stringify({ batch: [{ name: 'from-a', data: '{}', channel: `presence-room-${bRoomId}` }] });
    await expectNothingInB(async () => {
      const onB = await sendSignedTrigger(apps.a, 'batch_events', body, { appId: apps.b.appId });
      const onA = await sendSignedTrigger(apps.a, 'batch_events', body);
      expect({ status: onB.status, code: onB.body?.error?.code }).toEqual({ status: 401, code: 'invalid_pusher_signature' });
      expect({ status: onA.status, body: onA.body }).toEqual({ status: 200, body: { batch: [{}] } });
    });
  },
});
