import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, type Tenants, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Messages area's routes (messages, imports, moderation); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

/**
 * A's attempts at B's message with the same user id as its author: through each of B's rooms (the
 * room is not found) and through A's own room (the message is not found there).
 */
function messageAttempts(
  t: Tenants,
  callers: { who: string; auth: { token?: string; apiKey?: string } }[],
  call: (auth: object, roomId: string) => Promise<any>,
) {
  return {
    throughB: callers.flatMap(({ who, auth }) =>
      t.bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => call(auth, roomId) })),
    ),
    throughA: callers.map(({ who, auth }) => ({ label: `${who} own room`, call: () => call(auth, t.aRoomId) })),
  };
}

async function expectMessageUnreachable(t: Tenants, attempts: ReturnType<typeof messageAttempts>) {
  await expectAllNotFound(attempts.throughB);
  await expectAllNotFound(attempts.throughA, 'message_not_found');
  expect(await t.bHistory()).toEqual([t.bMessage]);
}

const userCallers = (t: Tenants) => t.aUsers().map(({ who, token }) => ({ who, auth: { token } }));

/** A message of B's in a room of its own, reported by B's member: B's moderation queue has a report. */
async function bReport(t: Tenants): Promise<string> {
  const roomId = uniqueId('b-reports');
  await api('/rooms', { apiKey: t.b.apiKey, body: { id: roomId, type: 'group', members: [t.sharedUserId] } });
  const message = (await api('/messages', { token: t.bMember, body: { roomId, content: 'report me' } })).body;
  const report = await api(`/messages/${message.id}/reports`, { token: t.bMember, body: { roomId, reason: 'spam' } });
  expect(report.status).toBe(201);
  return report.body.id as string;
}
const bOpenReports = async (t: Tenants) =>
  ((await api('/admin/moderation/reports', { apiKey: t.b.apiKey })).body.reports as any[]).map((report) => report.id);

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

  async EditMessage(t) {
    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, userCallers(t), (auth, roomId) =>
        api(`/messages/${t.bMessage.id}`, { ...auth, method: 'PATCH', body: { roomId, content: 'rewritten by A' } }),
      ),
    );
  },

  async DeleteMessage(t) {
    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, t.aCallers(), (auth, roomId) => api(`/messages/${t.bMessage.id}?roomId=${roomId}`, { ...auth, method: 'DELETE' })),
    );
  },

  async AddReaction(t) {
    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, userCallers(t), (auth, roomId) =>
        api(`/messages/${t.bMessage.id}/reactions/${encodeURIComponent('👍')}?roomId=${roomId}`, { ...auth, method: 'PUT' }),
      ),
    );
  },

  async RemoveReaction(t) {
    // Prepare
    const path = (roomId: string) => `/messages/${t.bMessage.id}/reactions/${encodeURIComponent('🎉')}?roomId=${roomId}`;

    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, userCallers(t), (auth, roomId) => api(path(roomId), { ...auth, method: 'DELETE' })),
    );
  },

  async ListPins({ aCallers, bRooms }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/pins`, auth) })),
      ),
    );
  },

  async PinMessage(t) {
    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, t.aCallers(), (auth, roomId) => api(`/rooms/${roomId}/pins/${t.bMessage.id}`, { ...auth, method: 'POST' })),
    );
  },

  async UnpinMessage(t) {
    // Act + Assess
    await expectAllNotFound(
      t.aCallers().flatMap(({ who, auth }) =>
        t.bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/pins/${t.bMessage.id}`, { ...auth, method: 'DELETE' }),
        })),
      ),
    );
    await expectAllNotFound(
      t.aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/rooms/${t.aRoomId}/pins/${t.bMessage.id}`, { ...auth, method: 'DELETE' }),
      })),
      'message_not_found',
    );
    expect(await t.bHistory()).toEqual([t.bMessage]);
  },

  async ReportMessage(t) {
    // Prepare
    const before = await bOpenReports(t);

    // Act + Assess
    await expectMessageUnreachable(
      t,
      messageAttempts(t, userCallers(t), (auth, roomId) =>
        api(`/messages/${t.bMessage.id}/reports`, { ...auth, body: { roomId, reason: 'spam' } }),
      ),
    );
    expect(await bOpenReports(t)).toEqual(before);
  },

  async ListReports(t) {
    // Prepare
    const reportId = await bReport(t);

    // Act
    const lists = await Promise.all(t.aCallers().map(({ auth }) => api('/admin/moderation/reports', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.reports.map((report: any) => report.id)).not.toContain(reportId);
    }
    expect(await bOpenReports(t)).toContain(reportId);
  },

  async DecideReport(t) {
    // Prepare
    const reportId = await bReport(t);

    // Act + Assess
    await expectAllNotFound(
      t.aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/admin/moderation/reports/${reportId}`, { ...auth, method: 'PATCH', body: { status: 'dismissed' } }),
      })),
      'report_not_found',
    );
    expect(await bOpenReports(t)).toContain(reportId);
  },
});
