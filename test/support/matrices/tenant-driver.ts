import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../api';
import { expectMatrixFile, routesOf } from './areas.ts';

/**
 * The tenant-isolation matrix (`test/e2e/tenant-isolation/<area>.test.ts`): project A's credentials
 * against project B's data, route by route. A's callers are as strong as A allows (an admin JWT, the
 * API key) and A's user shares B's user id, so only the tenant boundary can turn them away. Each
 * area's file has a case for every route of its area; the two projects and B's rooms and message
 * are made here, what only one area needs (webhooks, push configurations, AI data) in its file.
 */

/** Projects A and B, their users of the shared id, B's rooms and message, and A's own room. */
export interface Tenants {
  readonly a: TestProject;
  readonly b: TestProject;
  /** The same user id exists in both projects. */
  readonly sharedUserId: string;
  readonly aAdmin: string;
  readonly aMember: string;
  readonly bMember: string;
  readonly bRoomId: string;
  readonly bPublicRoomId: string;
  readonly bDmRoomId: string;
  readonly bMessage: any;
  readonly aRoomId: string;
  /** A's two strongest callers for routes that take either. */
  aCallers(): { who: string; auth: { token?: string; apiKey?: string } }[];
  /** A's users with a user JWT, for routes that act on the caller's own things and take no API key. */
  aUsers(): { who: string; token: string }[];
  bRooms(): string[];
  /** B's view of its own data, to show A's attempts changed nothing. */
  bHistory(roomId?: string): Promise<any[]>;
  bMembers(roomId?: string): Promise<any[]>;
  bRoom(roomId?: string): Promise<any>;
}

export const NOT_FOUND = { status: 404, body: { error: { code: 'room_not_found' } } };

async function createTenants(): Promise<Tenants> {
  const sharedUserId = uniqueId('bob');
  const [a, b] = await Promise.all([createTestProject('tenant-a'), createTestProject('tenant-b')]);
  const [aAdmin, aMember, bMember] = await Promise.all([
    a.token(sharedUserId, ['admin']),
    a.token(sharedUserId),
    b.token(sharedUserId, ['member']),
  ]);
  const bRoomId = uniqueId('b-room');
  const bPublicRoomId = uniqueId('b-public');
  const aRoomId = uniqueId('a-room');
  await api('/rooms', { token: bMember, body: { id: bRoomId, type: 'group', name: 'B room', members: ['b-friend'] } });
  await api('/rooms', { token: bMember, body: { id: bPublicRoomId, type: 'public', name: 'B public' } });
  const bDmRoomId = (await api('/rooms', { token: bMember, body: { type: 'dm', members: ['carol'] } })).body.id;
  await api('/rooms', { token: aMember, body: { id: aRoomId, type: 'group' } });
  await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: b.apiKey, body: { terms: ['b-secret-term'] } });
  const bMessage = (await api('/messages', { token: bMember, body: { roomId: bRoomId, content: 'B private b-secret-term' } })).body;
  return {
    a,
    b,
    sharedUserId,
    aAdmin,
    aMember,
    bMember,
    bRoomId,
    bPublicRoomId,
    bDmRoomId,
    bMessage,
    aRoomId,
    aCallers: () => [
      { who: 'admin JWT', auth: { token: aAdmin } },
      { who: 'API key', auth: { apiKey: a.apiKey } },
    ],
    aUsers: () => [
      { who: 'admin JWT', token: aAdmin },
      { who: 'member JWT', token: aMember },
    ],
    bRooms: () => [bRoomId, bPublicRoomId, bDmRoomId],
    bHistory: async (roomId = bRoomId) => (await api(`/rooms/${roomId}/messages`, { apiKey: b.apiKey })).body.messages,
    bMembers: async (roomId = bRoomId) =>
      ((await api(`/rooms/${roomId}/members`, { apiKey: b.apiKey })).body.members as any[]).map((m) => [m.userId, m.role]).sort(),
    bRoom: async (roomId = bRoomId) => (await api(`/rooms/${roomId}`, { apiKey: b.apiKey })).body,
  };
}

/** Makes the tenants in `beforeAll` (call it at the top of a file); the function it returns gives them from then on. */
export function tenantsBeforeAll(): () => Tenants {
  let created: Tenants | undefined;
  beforeAll(async () => {
    created = await createTenants();
  });
  return () => {
    if (!created) throw new Error('the tenants are used before their beforeAll ran');
    return created;
  };
}

/** Expects every response to be a 404 with the code (room_not_found unless given), naming the attempt on failure. */
export async function expectAllNotFound(
  attempts: { label: string; call: () => Promise<{ status: number; body: any }> }[],
  code = 'room_not_found',
) {
  const results = await Promise.all(attempts.map(async ({ label, call }) => ({ label, response: await call() })));
  for (const { label, response } of results) {
    expect({ label, status: response.status, code: response.body?.error?.code }).toEqual({ label, status: 404, code });
  }
}

/** A route's case: A's attempts on B's data and B's data checked afterwards. */
export type TenantCase = (tenants: Tenants) => Promise<void>;

/** A case per route of `areaId`, by route id, each run against the tenants. */
export function describeTenantMatrix(areaId: string, tenants: () => Tenants, cases: Record<string, TenantCase>): void {
  const routes = routesOf(areaId);

  describe('tenant isolation: project A against project B, route by route', () => {
    it('has a case for every route of its area and no case for a route that does not exist', () => {
      // Assess
      expect(Object.keys(cases).sort()).toEqual(routes.map((route) => route.id).sort());
      expectMatrixFile(areaId);
    });

    describe.each(routes.map((route) => ({ id: route.id, method: route.method, path: route.path })))('$method $path ($id)', ({ id }) => {
      it("does not reach project B's data", async () => {
        const run = cases[id];
        expect(run, `no tenant-isolation case for route ${id}`).toBeDefined();
        await run?.(tenants());
      });
    });
  });
}
