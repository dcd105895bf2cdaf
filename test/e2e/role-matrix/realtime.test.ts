import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { callerTable, describeRoleMatrix, NO_API_KEY, ROOM_CALLERS, roleMatrixBeforeAll } from '../../support/matrices/role-driver';
import { get } from '../../support/raw-table';
import { openSse } from '../../support/sse';

/** Who may publish events and watch, who may read a room's stream, and the user-level rules; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-realtime');
const { project, users, tokens } = roles;
/** Every user-level case acts on the `member` user's channel, watchlist or connections; `member` is the user themself. */
const subject = () => users.member;
const watchedIds = async () =>
  ((await api(`/users/${subject()}/watchlist`, { apiKey: project.apiKey })).body.targets as any[]).map((target) => target.targetId);

describeRoleMatrix('Realtime', roles, {
  minRole: {
    PublishEvents: {
      minRole: 'member',
      success: 202,
      async act(auth) {
        const roomId = uniqueId('room');
        await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'public' } });
        const response = await api('/events', { ...auth, body: { roomIds: [roomId], name: 'role-check' } });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toEqual({ sent: [roomId], skipped: [] });
            const cached = await get(`P#${project.projectId}#R#${roomId}#CONNS`, 'CACHE');
            expect(cached?.frame?.event).toBe(allowed ? 'role-check' : undefined);
          },
        };
      },
    },
    AddWatchlistTarget: {
      minRole: 'member',
      success: 201,
      async act(auth) {
        // Each user JWT adds to its own watchlist, the API key to the member's.
        const owner = (Object.keys(tokens) as (keyof typeof users)[]).find((key) => tokens[key] === auth.token);
        const watcherId = owner ? users[owner] : users.member;
        const targetId = uniqueId('watched');
        const response = await api(`/users/${watcherId}/watchlist`, { ...auth, body: { type: 'user', targetId } });
        return {
          ...response,
          check: async (allowed) => {
            const listed = await api(`/users/${watcherId}/watchlist`, { apiKey: project.apiKey });
            expect((listed.body.targets as any[]).some((target) => target.targetId === targetId)).toBe(allowed);
          },
        };
      },
    },
  },
  roomRules: [
    {
      route: 'StreamRoom',
      rule: 'room readers with a user JWT (members, guests, project admins); the route takes no API key',
      expected: callerTable({ callers: ROOM_CALLERS, allowed: ROOM_CALLERS, success: 200, except: { apiKey: NO_API_KEY } }),
      act: async (auth, { roomId }) => {
        const sse = await openSse(`/rooms/${roomId}/stream`, {
          token: auth.token,
          headers: auth.apiKey ? { 'x-service-api-key': auth.apiKey } : {},
        });
        sse.close();
        return { status: sse.status, body: sse.body, headers: sse.headers };
      },
      check: async () => undefined,
    },
  ],
  userRules: [
    {
      route: 'PublishUserEvent',
      success: 202,
      act: (auth) => api(`/users/${subject()}/events`, { ...auth, body: { name: 'role-check' } }),
    },
    {
      route: 'CloseUserConnections',
      success: 200,
      act: (auth) => api(`/users/${subject()}/connections`, { ...auth, method: 'DELETE' }),
    },
    {
      route: 'ListWatchlist',
      success: 200,
      act: (auth) => api(`/users/${subject()}/watchlist`, auth),
    },
    {
      route: 'AddWatchlistTarget',
      success: 201,
      async act(auth) {
        const targetId = uniqueId('watched');
        const response = await api(`/users/${subject()}/watchlist`, { ...auth, body: { type: 'user', targetId } });
        return { ...response, check: async (allowed) => expect((await watchedIds()).includes(targetId)).toBe(allowed) };
      },
    },
    {
      route: 'RemoveWatchlistTarget',
      success: 204,
      async act(auth) {
        const targetId = uniqueId('watched');
        await api(`/users/${subject()}/watchlist`, { apiKey: project.apiKey, body: { type: 'user', targetId } });
        const response = await api(`/users/${subject()}/watchlist`, { ...auth, method: 'DELETE', body: { type: 'user', targetId } });
        return { ...response, check: async (allowed) => expect((await watchedIds()).includes(targetId)).toBe(!allowed) };
      },
    },
  ],
});
