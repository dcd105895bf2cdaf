import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  callerTable,
  describeRoleMatrix,
  NO_API_KEY,
  NOT_A_MEMBER,
  ROOM_CALLERS,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';

/** Who may create rooms, and the room-level rules of rooms and members; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-rooms');
const { project, users } = roles;
const memberIds = async (roomId: string) =>
  ((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body.members as any[]).map((m) => m.userId);

describeRoleMatrix('Rooms', roles, {
  minRole: {
    CreateRoom: {
      minRole: 'member',
      success: 201,
      async act(auth) {
        const roomId = uniqueId('room');
        const response = await api('/rooms', { ...auth, body: { id: roomId, type: 'group' } });
        return {
          ...response,
          check: async (allowed) => expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).status).toBe(allowed ? 200 : 404),
        };
      },
    },
  },
  roomRules: [
    {
      route: 'UpdateRoom',
      rule: 'room owner, project admin/owner or API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ['roomOwner', 'admin', 'owner', 'apiKey'], success: 200 }),
      act: (auth, { roomId }) => api(`/rooms/${roomId}`, { ...auth, method: 'PATCH', body: { name: 'After' } }),
      check: async ({ roomId }, allowed) =>
        expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).body.name).toBe(allowed ? 'After' : 'Before'),
    },
    {
      route: 'AddRoomMember',
      rule: 'room owner, moderator, admin or API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ['roomOwner', 'moderator', 'admin', 'owner', 'apiKey'], success: 201 }),
      act: (auth, { roomId }) => api(`/rooms/${roomId}/members`, { ...auth, body: { userId: 'newcomer', role: 'member' } }),
      check: async ({ roomId }, allowed) => expect((await memberIds(roomId)).includes('newcomer')).toBe(allowed),
    },
    {
      route: 'RemoveRoomMember',
      rule: 'removing someone else: room owner, moderator, admin or API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ['roomOwner', 'moderator', 'admin', 'owner', 'apiKey'], success: 204 }),
      act: (auth, { roomId, target }) => api(`/rooms/${roomId}/members/${target}`, { ...auth, method: 'DELETE' }),
      check: async ({ roomId, target }, allowed) => expect((await memberIds(roomId)).includes(target)).toBe(!allowed),
    },
    {
      route: 'RemoveRoomMember',
      rule: 'leaving: every member, guests included, may remove themselves',
      expected: callerTable({
        callers: ['guest', 'member', 'roomOwner', 'moderator'],
        allowed: ['guest', 'member', 'roomOwner', 'moderator'],
        success: 204,
      }),
      act: (auth, { roomId }, caller) =>
        api(`/rooms/${roomId}/members/${users[caller as keyof typeof users]}`, { ...auth, method: 'DELETE' }),
      check: async ({ roomId }, _allowed, caller) =>
        expect((await memberIds(roomId)).includes(users[caller as keyof typeof users])).toBe(false),
    },
    {
      route: 'GetRoomE2eKey',
      rule: 'room members with a user JWT, guests excluded',
      expected: callerTable({
        callers: ROOM_CALLERS,
        allowed: ['member', 'roomOwner', 'moderator'],
        success: 200,
        refused: NOT_A_MEMBER,
        except: { guest: [403, 'guest_forbidden'], apiKey: NO_API_KEY },
      }),
      act: (auth, { roomId }) => api(`/rooms/${roomId}/e2e-key`, auth),
      check: async () => undefined,
    },
  ],
});
