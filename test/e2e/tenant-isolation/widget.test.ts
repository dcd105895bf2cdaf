import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the embed widget's routes: A's admin and API key neither read nor
 * change B's widget settings (nor name B's rooms as A's support room), a guest session of A is
 * useless in B, and A's allowed origins start no session in B. The matrix is `tenant-driver.ts`.
 */

const A_SITE = 'https://a-shop.example.com';
const B_SITE = 'https://b-shop.example.com';

const tenants = tenantsBeforeAll();

beforeAll(async () => {
  const { a, b, bPublicRoomId } = tenants();
  await api('/admin/widget', { method: 'PUT', apiKey: a.apiKey, body: { allowedOrigins: [A_SITE], supportRoomId: null } });
  await api('/admin/widget', { method: 'PUT', apiKey: b.apiKey, body: { allowedOrigins: [B_SITE], supportRoomId: bPublicRoomId } });
});

const bSettings = async () => (await api('/admin/widget', { apiKey: tenants().b.apiKey })).body;

describeTenantMatrix('Widget', tenants, {
  async CreateGuestSession({ a, b, bRooms }) {
    // A's session names B's project only by its own id: the token is A's, and B's rooms do not exist for it.
    const aGuest = (await api('/auth/guest', { headers: { origin: A_SITE }, body: { projectId: a.projectId } })).body;
    const intoB = await api('/auth/guest', { headers: { origin: A_SITE }, body: { projectId: b.projectId } });
    const bRoomFromA = await api('/auth/guest', { headers: { origin: A_SITE }, body: { projectId: a.projectId, roomId: bRooms()[1] } });

    expect(aGuest.token).toBeDefined();
    expect(intoB).toMatchObject({ status: 403, body: { error: { code: 'origin_not_allowed' } } });
    expect(bRoomFromA).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    await expectAllNotFound(
      bRooms().map((roomId) => ({
        label: roomId,
        call: () => api(`/rooms/${roomId}/messages`, { token: aGuest.token, headers: { origin: A_SITE } }),
      })),
    );
    // A's support room alias resolves in A only: A has none.
    const support = await api('/auth/guest', { headers: { origin: A_SITE }, body: { projectId: a.projectId, roomId: 'support' } });
    expect(support).toMatchObject({ status: 404, body: { error: { code: 'support_room_not_set' } } });
  },

  async GetWidgetSettings({ aCallers }) {
    for (const { auth } of aCallers()) {
      const read = await api('/admin/widget', auth);
      expect(read.body).toMatchObject({ allowedOrigins: [A_SITE], supportRoomId: null });
    }
  },

  async PutWidgetSettings({ aCallers, bRooms }) {
    const before = await bSettings();
    for (const { auth } of aCallers()) {
      // B's rooms are no rooms of A's: none may be A's support room.
      await expectAllNotFound(
        bRooms().map((roomId) => ({
          label: roomId,
          call: () => api('/admin/widget', { ...auth, method: 'PUT', body: { allowedOrigins: [A_SITE], supportRoomId: roomId } }),
        })),
      );
      const own = await api('/admin/widget', {
        ...auth,
        method: 'PUT',
        body: { allowedOrigins: [A_SITE, 'https://other.example.com'], supportRoomId: null },
      });
      expect(own.status).toBe(200);
    }
    expect(await bSettings()).toEqual(before);
  },
});
