import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  type Answer,
  type Auth,
  callerTable,
  describeRoleMatrix,
  EVERY_CALLER,
  FORBIDDEN,
  NO_API_KEY,
  NOT_A_MEMBER,
  ROOM_CALLERS,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';
import { eventually } from '../../support/webhook-receiver';

/**
 * Who may import messages and moderate, who may backdate a message, and who may edit, delete,
 * react to, pin and report one; the matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-messages');
const { project, users, tokens, newRoomByKey, roomOfEveryRole, historyOf } = roles;
const BACKDATING_FORBIDDEN: Answer = [403, 'backdating_forbidden'];
const NOT_AUTHOR: Answer = [403, 'not_message_author'];
/** Every user of the room (its guest included) and the project's admins; the outsider is no member; the API key is no user. */
const ROOM_USERS = ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner'] as const;
/** The room's owner, moderators and above, and the API key. */
const ROOM_MODERATORS = ['roomOwner', 'moderator', 'admin', 'owner', 'apiKey'] as const;

/** A message of `userId` (the room's bystander `target` unless named) posted with the API key. */
async function messageOf(roomId: string, userId: string): Promise<number> {
  const sent = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { content: 'matrix message', userId } });
  return sent.body.id as number;
}
const messageIn = async (roomId: string, id: number) => (await historyOf(roomId)).find((message) => message.id === id);
/** The message's id, kept between a case's act and its check. */
const messageIds = new Map<string, number>();
const emojiPath = (messageId: number, roomId: string) => `/messages/${messageId}/reactions/${encodeURIComponent('👍')}?roomId=${roomId}`;

/** A report of a fresh message, filed by the `member` user, for the moderators' routes. */
async function newReport(): Promise<string> {
  const roomId = await roomOfEveryRole();
  const messageId = await messageOf(roomId, users.admin);
  const filed = await api(`/messages/${messageId}/reports`, { token: tokens.member, body: { roomId, reason: 'spam' } });
  expect(filed.status).toBe(201);
  return filed.body.id as string;
}
const reportStatusOf = async (reportId: string, status: string) =>
  (await api(`/admin/moderation/reports?status=${status}`, { apiKey: project.apiKey })).body.reports.some(
    (report: any) => report.id === reportId,
  );

describeRoleMatrix('Messages', roles, {
  minRole: {
    ImportMessage: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const roomId = await newRoomByKey();
        const response = await api('/admin/messages/import', { ...auth, body: { roomId, userId: 'legacy', content: 'imported' } });
        return { ...response, check: async (allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0) };
      },
    },
    ImportMessageBatch: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const roomId = await newRoomByKey();
        const response = await api('/admin/messages/import/batch', {
          ...auth,
          body: { messages: [{ roomId, userId: 'legacy', content: 'imported' }] },
        });
        return { ...response, check: async (allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0) };
      },
    },
    GetBlockList: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/moderation/blocklist', auth),
    },
    ReplaceBlockList: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const term = uniqueId('term');
        const response = await api('/admin/moderation/blocklist', { ...auth, method: 'PUT', body: { terms: [term] } });
        return {
          ...response,
          check: async (allowed) => {
            const terms = (await api('/admin/moderation/blocklist', { apiKey: project.apiKey })).body.terms;
            expect(terms.includes(term)).toBe(allowed);
          },
        };
      },
    },
    ListModerationFlags: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/moderation/flags', auth),
    },
    ListReports: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/moderation/reports', auth),
    },
    DecideReport: {
      minRole: 'moderator',
      success: 200,
      async act(auth: Auth) {
        const reportId = await newReport();
        const response = await api(`/admin/moderation/reports/${reportId}`, { ...auth, method: 'PATCH', body: { status: 'resolved' } });
        return { ...response, check: async (allowed) => expect(await reportStatusOf(reportId, 'resolved')).toBe(allowed) };
      },
    },
  },
  roomRules: [
    {
      route: 'PostRoomMessage',
      rule: 'backdating (createdAt, another userId): admin, owner or API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ['admin', 'owner', 'apiKey'], success: 201, refused: BACKDATING_FORBIDDEN }),
      act: (auth, { roomId }) =>
        api(`/rooms/${roomId}/messages`, { ...auth, body: { content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'CreateMessage',
      rule: 'backdating (createdAt): admin or owner JWT (the route takes no API key)',
      expected: callerTable({
        callers: ROOM_CALLERS,
        allowed: ['admin', 'owner'],
        success: 201,
        refused: BACKDATING_FORBIDDEN,
        except: { apiKey: NO_API_KEY },
      }),
      act: (auth, { roomId }) =>
        api('/messages', { ...auth, body: { roomId, content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'EditMessage',
      rule: 'the author alone (here the member), not even a moderator',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ['member'],
        success: 200,
        refused: NOT_AUTHOR,
        except: { apiKey: NO_API_KEY, outsider: NOT_A_MEMBER },
      }),
      async act(auth, { roomId }) {
        const id = await messageOf(roomId, users.member);
        messageIds.set(roomId, id);
        return api(`/messages/${id}`, { ...auth, method: 'PATCH', body: { roomId, content: 'edited' } });
      },
      check: async ({ roomId }, allowed) =>
        expect((await messageIn(roomId, messageIds.get(roomId) as number))?.content).toBe(allowed ? 'edited' : 'matrix message'),
    },
    {
      route: 'DeleteMessage',
      rule: "another's message: the room's owner, moderators and above, the API key",
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_MODERATORS,
        success: 204,
        refused: NOT_AUTHOR,
        except: { outsider: NOT_A_MEMBER },
      }),
      async act(auth, { roomId, target }) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        return api(`/messages/${id}?roomId=${roomId}`, { ...auth, method: 'DELETE' });
      },
      check: async ({ roomId }, allowed) =>
        expect((await messageIn(roomId, messageIds.get(roomId) as number))?.deletedAt !== null).toBe(allowed),
    },
    {
      route: 'AddReaction',
      rule: 'everyone who may read the room, guests too (user JWT)',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_USERS,
        success: 201,
        refused: NOT_A_MEMBER,
        except: { apiKey: NO_API_KEY },
      }),
      async act(auth, { roomId, target }) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        return api(emojiPath(id, roomId), { ...auth, method: 'PUT' });
      },
      async check({ roomId }, allowed) {
        if (!allowed) {
          expect((await messageIn(roomId, messageIds.get(roomId) as number))?.reactions).toEqual({});
          return;
        }
        await eventually(
          'the reaction counted',
          async () => (await messageIn(roomId, messageIds.get(roomId) as number))?.reactions['👍'] === 1,
        );
      },
    },
    {
      route: 'RemoveReaction',
      rule: 'everyone who may read the room takes their own reaction back (user JWT)',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_USERS,
        success: 204,
        refused: NOT_A_MEMBER,
        except: { apiKey: NO_API_KEY },
      }),
      async act(auth, { roomId, target }, caller) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        // Another user of the room reacts too: a removal takes back the caller's own reaction only.
        const other = caller === 'roomOwner' ? tokens.member : tokens.roomOwner;
        expect((await api(emojiPath(id, roomId), { token: other, method: 'PUT' })).status).toBe(201);
        await api(emojiPath(id, roomId), { ...auth, method: 'PUT' });
        return api(emojiPath(id, roomId), { ...auth, method: 'DELETE' });
      },
      check: async ({ roomId }) =>
        void (await eventually("only the other user's reaction left", async () => {
          const reactions = (await messageIn(roomId, messageIds.get(roomId) as number))?.reactions;
          return reactions?.['👍'] === 1 ? reactions : undefined;
        })),
    },
    {
      route: 'ListPins',
      rule: 'everyone who may read the room',
      expected: callerTable({ callers: EVERY_CALLER, allowed: [...ROOM_USERS, 'apiKey'], success: 200, refused: NOT_A_MEMBER }),
      act: (auth, { roomId }) => api(`/rooms/${roomId}/pins`, auth),
      check: async () => {},
    },
    {
      route: 'PinMessage',
      rule: "the room's owner, moderators and above, the API key",
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_MODERATORS,
        success: 201,
        refused: FORBIDDEN,
        except: { outsider: NOT_A_MEMBER },
      }),
      async act(auth, { roomId, target }) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        return api(`/rooms/${roomId}/pins/${id}`, { ...auth, method: 'POST' });
      },
      check: async ({ roomId }, allowed) => expect((await messageIn(roomId, messageIds.get(roomId) as number))?.pinned).toBe(allowed),
    },
    {
      route: 'UnpinMessage',
      rule: "the room's owner, moderators and above, the API key",
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_MODERATORS,
        success: 204,
        refused: FORBIDDEN,
        except: { outsider: NOT_A_MEMBER },
      }),
      async act(auth, { roomId, target }) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        expect((await api(`/rooms/${roomId}/pins/${id}`, { apiKey: project.apiKey, method: 'POST' })).status).toBe(201);
        return api(`/rooms/${roomId}/pins/${id}`, { ...auth, method: 'DELETE' });
      },
      check: async ({ roomId }, allowed) => expect((await messageIn(roomId, messageIds.get(roomId) as number))?.pinned).toBe(!allowed),
    },
    {
      route: 'ReportMessage',
      rule: 'everyone who may read the room, guests too (user JWT)',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ROOM_USERS,
        success: 201,
        refused: NOT_A_MEMBER,
        except: { apiKey: NO_API_KEY },
      }),
      async act(auth, { roomId, target }) {
        const id = await messageOf(roomId, target);
        messageIds.set(roomId, id);
        return api(`/messages/${id}/reports`, { ...auth, body: { roomId, reason: 'other' } });
      },
      async check({ roomId }, allowed) {
        const reports = (await api('/admin/moderation/reports', { apiKey: project.apiKey })).body.reports as any[];
        expect(reports.some((report) => report.messageId === messageIds.get(roomId))).toBe(allowed);
      },
    },
  ],
});
