import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Rooms area's routes (rooms, members, E2E keys); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

describeTenantMatrix('Rooms', tenants, {
  async CreateRoom({ a, b, sharedUserId, aAdmin, bMember, bRoom }) {
    // Prepare: a group room and a dm of B (dm ids derive from the pair, so A's dm of the same pair has the same id)
    const roomId = uniqueId('same-id');
    const pair = [uniqueId('dan'), uniqueId('eve')];
    await api('/rooms', { token: bMember, body: { id: roomId, type: 'group', name: 'B original' } });
    const bDm = await api('/rooms', { apiKey: b.apiKey, body: { type: 'dm', members: pair } });

    // Act
    const sameId = await api('/rooms', { token: aAdmin, body: { id: roomId, type: 'public', name: 'A copy' } });
    const sameDm = await api('/rooms', { apiKey: a.apiKey, body: { type: 'dm', members: [...pair].reverse() } });

    // Assess: ids are per project, so A gets its own new rooms (201, not 409 or 200) and B's stay as they were
    expect(sameId.status).toBe(201);
    expect(sameDm.status).toBe(201);
    expect(sameDm.body.id).toBe(bDm.body.id);
    expect(await bRoom(roomId)).toMatchObject({ type: 'group', name: 'B original', createdBy: sharedUserId });
    expect(await bRoom(bDm.body.id)).toEqual({ ...bDm.body, membership: null });
    expect((await api('/rooms?scope=public&limit=100', { token: bMember })).body.rooms.map((r: any) => r.id)).not.toContain(roomId);
  },

  async ListRooms({ aMember, aRoomId, bRooms }) {
    // Act
    const mine = await api('/rooms?limit=100', { token: aMember });
    const publicRooms = await api('/rooms?scope=public&limit=100', { token: aMember });

    // Assess
    const ids = [...mine.body.rooms, ...publicRooms.body.rooms].map((r: any) => r.id);
    for (const roomId of bRooms()) expect(ids).not.toContain(roomId);
    expect(mine.body.rooms.map((r: any) => r.id)).toContain(aRoomId);
  },

  async GetRoom({ aCallers, bRooms }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}`, auth) })),
      ),
    );
  },

  async UpdateRoom({ aCallers, bRooms, bRoom }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}`, { ...auth, method: 'PATCH', body: { name: 'defaced', e2eEnabled: true } }),
        })),
      ),
    );
    expect(await bRoom()).toMatchObject({ name: 'B room', e2eEnabled: false });
  },

  async ListRoomMembers({ aCallers, bRooms }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/members`, auth) })),
      ),
    );
  },

  async AddRoomMember({ aCallers, bRooms, bMembers }) {
    // Prepare
    const before = await bMembers();

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/members`, { ...auth, body: { userId: 'a-spy', role: 'member' } }),
        })),
      ),
    );
    expect(await bMembers()).toEqual(before);
  },

  async RemoveRoomMember({ sharedUserId, bRoomId, bDmRoomId, aCallers, bMembers }) {
    // Prepare
    const before = await bMembers();

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        [
          [bRoomId, 'b-friend'],
          [bRoomId, sharedUserId],
          [bDmRoomId, 'carol'],
        ].map(([roomId, userId]) => ({
          label: `${who} ${roomId} ${userId}`,
          call: () => api(`/rooms/${roomId}/members/${userId}`, { ...auth, method: 'DELETE' }),
        })),
      ),
    );
    expect(await bMembers()).toEqual(before);
  },

  async GetRoomE2eKey({ aAdmin, aMember, bRooms }) {
    // Act + Assess
    await expectAllNotFound(
      [aAdmin, aMember].flatMap((token) =>
        bRooms().map((roomId) => ({ label: `${roomId}`, call: () => api(`/rooms/${roomId}/e2e-key`, { token }) })),
      ),
    );
  },
});
