import { expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Messages area's routes (messages, imports, moderation); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

describeTenantMatrix('Messages', tenants, {
  async CreateMessage({ sharedUserId, aAdmin, aMember, bPublicRoomId, bMessage, aRoomId, bRooms, bHistory, bMembers }) {
    // Act
    const replyToB = await api('/messages', { token: aMember, body: { roomId: aRoomId, content: 'reply', parent_id: bMessage.id } });

    // Assess
    await expectAllNotFound(
      [aAdmin, aMember].flatMap((token) =>
        bRooms().map((roomId) => ({ label: roomId, call: () => api('/messages', { token, body: { roomId, content: 'intrusion' } }) })),
      ),
    );
    expect(replyToB).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    expect(await bHistory()).toEqual([bMessage]);
    expect(await bHistory(bPublicRoomId)).toEqual([]);
    expect(await bMembers(bPublicRoomId)).toEqual([[sharedUserId, 'owner']]);
  },

  async ListRoomMessages({ sharedUserId, aMember, bRoomId, bPublicRoomId, aCallers, bRooms, bMembers }) {
    // Act + Assess
    await expectAllNotFound([
      ...aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/messages`, auth) })),
      ),
      { label: 'member after', call: () => api(`/rooms/${bRoomId}/messages?after=0`, { token: aMember }) },
    ]);
    expect(await bMembers(bPublicRoomId)).toEqual([[sharedUserId, 'owner']]);
  },

  async PostRoomMessage({ sharedUserId, aMember, bMessage, aCallers, bRooms, bHistory }) {
    // Act + Assess
    await expectAllNotFound(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () =>
            api(`/rooms/${roomId}/messages`, {
              ...auth,
              body: { content: 'intrusion', ...(who === 'member JWT' ? {} : { userId: sharedUserId, createdAt: '2020-01-01T00:00:00Z' }) },
            }),
        })),
      ),
    );
    expect(await bHistory()).toEqual([bMessage]);
  },

  async ImportMessage({ sharedUserId, bMessage, aCallers, bRooms, bHistory }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api('/admin/messages/import', { ...auth, body: { roomId, userId: sharedUserId, content: 'planted' } }),
        })),
      ),
    );
    expect(await bHistory()).toEqual([bMessage]);
  },

  async ImportMessageBatch({ a, sharedUserId, bRoomId, bMessage, aRoomId, aCallers, bHistory }) {
    // Prepare
    const aBefore = (await api(`/rooms/${aRoomId}/messages`, { apiKey: a.apiKey })).body.messages;

    // Act + Assess
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () =>
          api('/admin/messages/import/batch', {
            ...auth,
            body: {
              messages: [
                { roomId: aRoomId, userId: sharedUserId, content: 'own room' },
                { roomId: bRoomId, userId: sharedUserId, content: 'planted' },
              ],
            },
          }),
      })),
    );
    expect(await bHistory()).toEqual([bMessage]);
    expect((await api(`/rooms/${aRoomId}/messages`, { apiKey: a.apiKey })).body.messages).toEqual(aBefore);
  },

  async GetBlockList({ aCallers }) {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/admin/moderation/blocklist', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.terms).not.toContain('b-secret-term');
    }
  },

  async ReplaceBlockList({ a, b, bMember, bRoomId }) {
    // Act
    const replaced = await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: a.apiKey, body: { terms: ['a-only-term'] } });

    // Assess
    expect(replaced.status).toBe(200);
    expect((await api('/admin/moderation/blocklist', { apiKey: b.apiKey })).body.terms).toEqual(['b-secret-term']);
    const clean = await api('/messages', { token: bMember, body: { roomId: bRoomId, content: 'mentions a-only-term' } });
    expect(clean.body.moderation).toBeNull();
  },

  async ListModerationFlags({ b, bRoomId, bMessage, aCallers }) {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/admin/moderation/flags', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.flags.map((flag: any) => flag.roomId)).not.toContain(bRoomId);
    }
    expect((await api('/admin/moderation/flags', { apiKey: b.apiKey })).body.flags.map((flag: any) => flag.messageId)).toContain(
      bMessage.id,
    );
  },
});
