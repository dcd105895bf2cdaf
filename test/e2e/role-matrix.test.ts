import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes, ROLES, type Role } from '#wiring';
import { createAgent, dispositionCode, postThread, seedRoomSummary } from '../support/ai/fixtures';
import { type ApiOptions, type ApiResponse, api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { fcmToken, newSubscription, seedPushRecord } from '../support/push/fixtures';
import { get } from '../support/raw-table';
import { openSse } from '../support/sse';

/**
 * Who may do what: every project role and the API key against every route with a `minRole`
 * (from the wiring table), every route with room-level rules (room owner, moderator, member, guest),
 * every route with user-level rules (the user themself, a project admin or the API key), every
 * push route on the caller's own targets (any user JWT, never the API key) and the AI reads open to
 * every caller of the project.
 */

type Auth = Pick<ApiOptions, 'token' | 'apiKey'>;

let project: TestProject;
const users = {
  guest: uniqueId('guest'),
  member: uniqueId('member'),
  roomOwner: uniqueId('room-owner'),
  moderator: uniqueId('moderator'),
  admin: uniqueId('admin'),
  owner: uniqueId('owner'),
  /** A project member in none of the rooms the room-level rules make. */
  outsider: uniqueId('outsider'),
};
const tokens = {} as Record<keyof typeof users, string>;

beforeAll(async () => {
  project = await createTestProject('roles');
  const roleOf: Record<keyof typeof users, Role> = {
    guest: 'guest',
    member: 'member',
    roomOwner: 'member',
    moderator: 'moderator',
    admin: 'admin',
    owner: 'owner',
    outsider: 'member',
  };
  await Promise.all(
    (Object.keys(users) as (keyof typeof users)[]).map(async (key) => {
      tokens[key] = await project.token(users[key], [roleOf[key]]);
    }),
  );
});

const newRoomByKey = async (type: 'group' | 'public' = 'group') => {
  const roomId = uniqueId('room');
  await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type } });
  return roomId;
};
/** A group room every role's user belongs to (the guest as a room guest): only the project role decides. */
const roomOfEveryRole = async () => {
  const roomId = uniqueId('room');
  await api('/rooms', {
    apiKey: project.apiKey,
    body: { id: roomId, type: 'group', members: [users.member, users.moderator, users.admin, users.owner] },
  });
  await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId: users.guest, role: 'guest' } });
  return roomId;
};
const historyOf = async (roomId: string) => (await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey })).body.messages as any[];
const webhooksOf = async () => (await api('/webhooks', { apiKey: project.apiKey })).body.webhooks as any[];
const newWebhookByKey = async () => {
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['message.created'] },
  });
  return registered.body.id as string;
};
/** A well-formed delivery id that exists nowhere (the shared runtime runs no queue consumers, so it makes no deliveries). */
const unknownDeliveryId = () => `whd_${randomBytes(16).toString('hex')}`;
const pushEnvironments = async () =>
  ((await api('/push/config', { apiKey: project.apiKey })).body.configs as any[]).map((config) => config.environment);
const agentsOf = async () => (await api('/agents', { apiKey: project.apiKey })).body.agents as any[];
const handoffStateOf = async (roomId: string) => (await api(`/rooms/${roomId}/handoff`, { apiKey: project.apiKey })).body.state as string;
const dispositionCodes = async () =>
  ((await api('/agent-queue/dispositions', { apiKey: project.apiKey })).body.dispositions as any[]).map((entry) => entry.code);

describe('routes with a minimum project role', () => {
  interface MinRoleCase {
    /** The role the contract asks for; checked against the wiring table. */
    readonly minRole: Role;
    readonly success: number;
    act(auth: Auth): Promise<ApiResponse & { check?: (allowed: boolean) => Promise<void> }>;
  }

  const cases: Record<string, MinRoleCase> = {
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
    RegisterWebhook: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const url = `https://example.com/hooks/${uniqueId('hook')}`;
        const response = await api('/webhooks/register', { ...auth, body: { url, eventTypes: ['message.created'] } });
        return {
          ...response,
          check: async (allowed) => expect((await webhooksOf()).some((webhook) => webhook.url === url)).toBe(allowed),
        };
      },
    },
    ListWebhooks: {
      minRole: 'admin',
      success: 200,
      act: (auth) => api('/webhooks', auth),
    },
    DeleteWebhook: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const webhookId = await newWebhookByKey();
        const response = await api(`/webhooks/${webhookId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await webhooksOf()).some((webhook) => webhook.id === webhookId)).toBe(!allowed),
        };
      },
    },
    ListWebhookDeliveries: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/webhooks/deliveries', auth),
    },
    SummarizeThread: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const { rootId } = await postThread(project.projectId, { token: tokens.member }, roomId);
        return api(`/messages/${rootId}/summary`, { ...auth, body: { roomId } });
      },
    },
    SuggestReplies: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        await api('/messages', { token: tokens.member, body: { roomId, content: 'Can someone review my change?' } });
        return api('/messages/suggest-replies', { ...auth, body: { roomId } });
      },
    },
    InvokeAgent: {
      minRole: 'member',
      success: 201,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Role check' });
        const response = await api(`/agents/${agent.id}/invoke`, { ...auth, body: { roomId, prompt: 'Say hello' } });
        return {
          ...response,
          check: async (allowed) =>
            expect((await historyOf(roomId)).filter((message) => message.userId === agent.userId)).toHaveLength(allowed ? 1 : 0),
        };
      },
    },
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
    GetProjectFeatureFlags: {
      minRole: 'admin',
      success: 200,
      act: (auth) => api('/admin/feature-flags', auth),
    },
    SetProjectFeatureFlags: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        await api('/admin/feature-flags', { apiKey: project.apiKey, method: 'PUT', body: { overrides: { embed_widget: true } } });
        const response = await api('/admin/feature-flags', { ...auth, method: 'PUT', body: { overrides: { embed_widget: false } } });
        return {
          ...response,
          check: async (allowed) => {
            const read = await api('/admin/feature-flags', { apiKey: project.apiKey });
            expect(read.body.overrides).toEqual({ embed_widget: !allowed });
          },
        };
      },
    },
    PutPushConfig: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const environment = uniqueId('env');
        const response = await api('/push/config', { ...auth, method: 'PUT', body: { environment, webPushEnabled: false } });
        return { ...response, check: async (allowed) => expect((await pushEnvironments()).includes(environment)).toBe(allowed) };
      },
    },
    GetPushConfig: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const before = (await api('/push/config', { apiKey: project.apiKey })).body;
        const response = await api('/push/config', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toEqual({ configs: expect.any(Array) });
            expect((await api('/push/config', { apiKey: project.apiKey })).body).toEqual(before);
          },
        };
      },
    },
    ReplayWebhookDelivery: {
      minRole: 'admin',
      // No delivery exists in this runtime: getting past the role check means 404 delivery_not_found, not 403.
      success: 404,
      async act(auth) {
        const response = await api(`/admin/webhooks/deliveries/${unknownDeliveryId()}/replay`, { ...auth, method: 'POST' });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body?.error?.code).toBe('delivery_not_found');
          },
        };
      },
    },
    GetAiUsage: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/ai/usage', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed)
              expect(response.body).toEqual({
                month: expect.stringMatching(/^\d{4}-\d{2}$/),
                used: expect.any(Number),
                quota: expect.any(Number),
                remaining: expect.any(Number),
              });
          },
        };
      },
    },
    CreateAgent: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const handle = `role-${randomBytes(5).toString('hex')}`;
        const response = await api('/agents', { ...auth, body: { handle, name: 'Role check', instructions: 'Answer briefly.' } });
        return { ...response, check: async (allowed) => expect((await agentsOf()).some((agent) => agent.handle === handle)).toBe(allowed) };
      },
    },
    UpdateAgent: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Before' });
        const response = await api(`/agents/${agent.id}`, { ...auth, method: 'PATCH', body: { name: 'After' } });
        return {
          ...response,
          check: async (allowed) =>
            expect((await agentsOf()).find((listed) => listed.id === agent.id)?.name).toBe(allowed ? 'After' : 'Before'),
        };
      },
    },
    DeleteAgent: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey });
        const response = await api(`/agents/${agent.id}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await agentsOf()).some((listed) => listed.id === agent.id)).toBe(!allowed),
        };
      },
    },
    StartRoomHandoff: {
      minRole: 'moderator',
      success: 201,
      async act(auth) {
        // Public: a moderator may read it without a membership, as its history.
        const roomId = await newRoomByKey('public');
        const response = await api(`/rooms/${roomId}/handoff`, { ...auth, method: 'POST', body: { note: 'role check' } });
        return { ...response, check: async (allowed) => expect(await handoffStateOf(roomId)).toBe(allowed ? 'human_active' : 'none') };
      },
    },
    CompleteRoomHandoff: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        // Public: a moderator may read it without a membership, as its history.
        const roomId = await newRoomByKey('public');
        await api(`/rooms/${roomId}/handoff`, { apiKey: project.apiKey, method: 'POST', body: {} });
        const response = await api(`/rooms/${roomId}/handoff`, { ...auth, method: 'PATCH', body: { disposition: 'resolved' } });
        return { ...response, check: async (allowed) => expect(await handoffStateOf(roomId)).toBe(allowed ? 'completed' : 'human_active') };
      },
    },
    SetDispositions: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const code = dispositionCode('role');
        const response = await api('/admin/agent-queue/dispositions', {
          ...auth,
          method: 'PUT',
          body: { dispositions: [{ code, label: 'Role check' }] },
        });
        return { ...response, check: async (allowed) => expect((await dispositionCodes()).includes(code)).toBe(allowed) };
      },
    },
    ListAgentTasks: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        const response = await api('/agent-queue/tasks?status=claimed', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toEqual({ tasks: expect.any(Array) });
          },
        };
      },
    },
  };

  afterAll(async () => {
    // The webhook cases leave registrations (at example.com) behind: with them, every message the later
    // sections post (threads, agent answers) would start a delivery that is still resolving the host
    // when the runtime stops.
    await Promise.all((await webhooksOf()).map((webhook) => api(`/webhooks/${webhook.id}`, { apiKey: project.apiKey, method: 'DELETE' })));
  });

  const routesWithMinRole = httpRoutes.filter((route) => route.minRole !== undefined);
  const callers: { name: string; role?: Role; auth: () => Auth }[] = [
    ...ROLES.map((role) => ({ name: `${role} JWT`, role, auth: () => ({ token: tokenFor(role) }) })),
    { name: 'API key', auth: () => ({ apiKey: project.apiKey }) },
  ];
  const tokenFor = (role: Role) => tokens[role === 'member' ? 'member' : role];

  it('has a case for every route with a minRole, with the role the contract names', () => {
    // Assess
    expect(Object.fromEntries(routesWithMinRole.map((route) => [route.id, route.minRole]))).toEqual(
      Object.fromEntries(Object.entries(cases).map(([id, c]) => [id, c.minRole])),
    );
  });

  describe.each(callers)('as $name', (caller) => {
    it.each(routesWithMinRole.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
      '$method $path ($id)',
      async ({ id }) => {
        // Prepare
        const rule = cases[id];
        expect(rule, `no role-matrix case for ${id}`).toBeDefined();
        if (!rule) return;
        const allowed = caller.role === undefined || ROLES.indexOf(caller.role) >= ROLES.indexOf(rule.minRole);
        // Routes that take a user JWT only: the API key, which passes every role check, is no user.
        const userOnly = caller.role === undefined && routesWithMinRole.find((route) => route.id === id)?.auth === 'user';

        // Act
        const response = await rule.act(caller.auth());

        // Assess
        if (userOnly)
          expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 401, code: 'missing_credentials' });
        else if (allowed) expect(response.status).toBe(rule.success);
        else expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
        await response.check?.(allowed && !userOnly);
      },
    );
  });
});

describe('routes with room-level rules', () => {
  type Caller = 'guest' | 'member' | 'roomOwner' | 'moderator' | 'admin' | 'owner' | 'outsider' | 'apiKey';
  /** The agent the InvokeAgent rule makes answer. */
  let agent: Awaited<ReturnType<typeof createAgent>>;

  beforeAll(async () => {
    agent = await createAgent({ apiKey: project.apiKey }, { name: 'Room rules' });
  });

  /**
   * A group room made by `roomOwner` with `member`, `moderator` and a bystander `target` as members
   * and `guest` added as a guest. The project admin and owner are not members, nor is `outsider`.
   */
  async function roomWithEveryone() {
    const roomId = uniqueId('room');
    const target = uniqueId('target');
    await api('/rooms', {
      token: tokens.roomOwner,
      body: { id: roomId, type: 'group', name: 'Before', members: [users.member, users.moderator, target] },
    });
    await api(`/rooms/${roomId}/members`, { token: tokens.roomOwner, body: { userId: users.guest, role: 'guest' } });
    return { roomId, target };
  }

  const authOf = (caller: Caller): Auth => (caller === 'apiKey' ? { apiKey: project.apiKey } : { token: tokens[caller] });
  const memberIds = async (roomId: string) =>
    ((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body.members as any[]).map((m) => m.userId);

  interface RoomRule {
    readonly route: string;
    readonly rule: string;
    /** Status per caller (callers left out do not apply); a pair adds the error code. */
    readonly expected: Partial<Record<Caller, number | [number, string]>>;
    act(auth: Auth, room: { roomId: string; target: string }, caller: Caller): Promise<ApiResponse>;
    /** Checks the stored effect after the call. */
    check(room: { roomId: string; target: string }, allowed: boolean, caller: Caller): Promise<void>;
  }

  const rules: RoomRule[] = [
    {
      route: 'UpdateRoom',
      rule: 'room owner, project admin/owner or API key',
      expected: {
        guest: [403, 'forbidden'],
        member: [403, 'forbidden'],
        roomOwner: 200,
        moderator: [403, 'forbidden'],
        admin: 200,
        owner: 200,
        apiKey: 200,
      },
      act: (auth, { roomId }) => api(`/rooms/${roomId}`, { ...auth, method: 'PATCH', body: { name: 'After' } }),
      check: async ({ roomId }, allowed) =>
        expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).body.name).toBe(allowed ? 'After' : 'Before'),
    },
    {
      route: 'AddRoomMember',
      rule: 'room owner, moderator, admin or API key',
      expected: {
        guest: [403, 'forbidden'],
        member: [403, 'forbidden'],
        roomOwner: 201,
        moderator: 201,
        admin: 201,
        owner: 201,
        apiKey: 201,
      },
      act: (auth, { roomId }) => api(`/rooms/${roomId}/members`, { ...auth, body: { userId: 'newcomer', role: 'member' } }),
      check: async ({ roomId }, allowed) => expect((await memberIds(roomId)).includes('newcomer')).toBe(allowed),
    },
    {
      route: 'RemoveRoomMember',
      rule: 'removing someone else: room owner, moderator, admin or API key',
      expected: {
        guest: [403, 'forbidden'],
        member: [403, 'forbidden'],
        roomOwner: 204,
        moderator: 204,
        admin: 204,
        owner: 204,
        apiKey: 204,
      },
      act: (auth, { roomId, target }) => api(`/rooms/${roomId}/members/${target}`, { ...auth, method: 'DELETE' }),
      check: async ({ roomId, target }, allowed) => expect((await memberIds(roomId)).includes(target)).toBe(!allowed),
    },
    {
      route: 'RemoveRoomMember',
      rule: 'leaving: every member, guests included, may remove themselves',
      expected: { guest: 204, member: 204, roomOwner: 204, moderator: 204 },
      act: (auth, { roomId }, caller) =>
        api(`/rooms/${roomId}/members/${users[caller as keyof typeof users]}`, { ...auth, method: 'DELETE' }),
      check: async ({ roomId }, _allowed, caller) =>
        expect((await memberIds(roomId)).includes(users[caller as keyof typeof users])).toBe(false),
    },
    {
      route: 'GetRoomE2eKey',
      rule: 'room members with a user JWT, guests excluded',
      expected: {
        guest: [403, 'guest_forbidden'],
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: [403, 'not_a_member'],
        owner: [403, 'not_a_member'],
        apiKey: [401, 'missing_credentials'],
      },
      act: (auth, { roomId }) => api(`/rooms/${roomId}/e2e-key`, auth),
      check: async () => undefined,
    },
    {
      route: 'PostRoomMessage',
      rule: 'backdating (createdAt, another userId): admin, owner or API key',
      expected: {
        guest: [403, 'backdating_forbidden'],
        member: [403, 'backdating_forbidden'],
        roomOwner: [403, 'backdating_forbidden'],
        moderator: [403, 'backdating_forbidden'],
        admin: 201,
        owner: 201,
        apiKey: 201,
      },
      act: (auth, { roomId }) =>
        api(`/rooms/${roomId}/messages`, { ...auth, body: { content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'CreateMessage',
      rule: 'backdating (createdAt): admin or owner JWT (the route takes no API key)',
      expected: {
        guest: [403, 'backdating_forbidden'],
        member: [403, 'backdating_forbidden'],
        roomOwner: [403, 'backdating_forbidden'],
        moderator: [403, 'backdating_forbidden'],
        admin: 201,
        owner: 201,
        apiKey: [401, 'missing_credentials'],
      },
      act: (auth, { roomId }) =>
        api('/messages', { ...auth, body: { roomId, content: 'old', userId: 'archivist', createdAt: '2020-05-05T05:05:05.000Z' } }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'StreamRoom',
      rule: 'room readers with a user JWT (members, guests, project admins); the route takes no API key',
      expected: {
        guest: 200,
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: 200,
        owner: 200,
        apiKey: [401, 'missing_credentials'],
      },
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
    {
      route: 'SummarizeThread',
      rule: 'room readers with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: {
        guest: [403, 'forbidden'],
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: 200,
        owner: 200,
        outsider: [403, 'not_a_member'],
        apiKey: [401, 'missing_credentials'],
      },
      act: async (auth, { roomId }) => {
        const { rootId } = await postThread(project.projectId, { token: tokens.roomOwner }, roomId);
        return api(`/messages/${rootId}/summary`, { ...auth, body: { roomId } });
      },
      // A summary is an answer, never a message of the room.
      check: async ({ roomId }) => expect(await historyOf(roomId)).toHaveLength(3),
    },
    {
      route: 'SuggestReplies',
      rule: 'room readers with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: {
        guest: [403, 'forbidden'],
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: 200,
        owner: 200,
        outsider: [403, 'not_a_member'],
        apiKey: [401, 'missing_credentials'],
      },
      act: async (auth, { roomId }) => {
        await api('/messages', { token: tokens.roomOwner, body: { roomId, content: 'Can someone review my change?' } });
        return api('/messages/suggest-replies', { ...auth, body: { roomId } });
      },
      check: async ({ roomId }) => expect(await historyOf(roomId)).toHaveLength(1),
    },
    {
      route: 'ListRoomSummaries',
      rule: 'room readers (members, guests, project admins) or API key',
      expected: {
        guest: 200,
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: 200,
        owner: 200,
        outsider: [403, 'not_a_member'],
        apiKey: 200,
      },
      act: async (auth, { roomId }) => {
        await seedRoomSummary(project.projectId, roomId);
        return api(`/rooms/${roomId}/summaries`, auth);
      },
      check: async () => undefined,
    },
    {
      route: 'InvokeAgent',
      rule: 'whoever may post in the room, with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: {
        guest: [403, 'forbidden'],
        member: 201,
        roomOwner: 201,
        moderator: 201,
        admin: 201,
        owner: 201,
        outsider: [403, 'not_a_member'],
        apiKey: [401, 'missing_credentials'],
      },
      act: (auth, { roomId }) => api(`/agents/${agent.id}/invoke`, { ...auth, body: { roomId, prompt: 'Say hello' } }),
      check: async ({ roomId }, allowed) =>
        expect((await historyOf(roomId)).filter((message) => message.userId === agent.userId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'GetRoomHandoff',
      rule: 'room owner and members, project moderators and above, API key; room guests and non-members refused',
      expected: {
        guest: [403, 'forbidden'],
        member: 200,
        roomOwner: 200,
        moderator: 200,
        admin: 200,
        owner: 200,
        outsider: [403, 'not_a_member'],
        apiKey: 200,
      },
      act: (auth, { roomId }) => api(`/rooms/${roomId}/handoff`, auth),
      check: async () => undefined,
    },
  ];

  const callers: Caller[] = ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner', 'outsider', 'apiKey'];

  it('has a rule for every AI route that acts in one room without a minimum role', () => {
    // Assess
    const ruled = new Set(rules.map((rule) => rule.route));
    const inRooms = httpRoutes.filter(
      (route) => route.handler.startsWith('http/ai/') && !route.minRole && (route.path.includes('{roomId}') || route.auth === 'user'),
    );
    expect(inRooms.length).toBeGreaterThan(0);
    expect(inRooms.map((route) => route.id).filter((id) => !ruled.has(id))).toEqual([]);
  });

  describe.each(rules.map((rule) => ({ ...rule, name: `${rule.route}: ${rule.rule}` })))('$name', (rule) => {
    it.each(callers.filter((caller) => rule.expected[caller] !== undefined))('as %s', async (caller) => {
      // Prepare
      const room = await roomWithEveryone();
      const expected = rule.expected[caller] as number | [number, string];
      const [status, code] = Array.isArray(expected) ? expected : [expected, undefined];
      const allowed = status < 300;

      // Act
      const response = await rule.act(authOf(caller), room, caller);

      // Assess
      expect({ status: response.status, code: allowed ? undefined : response.body?.error?.code }).toEqual({ status, code });
      await rule.check(room, allowed, caller);
    });
  });
});

describe('routes with user-level rules: the user themself, a project admin or the API key', () => {
  type Caller = 'guest' | 'member' | 'roomOwner' | 'moderator' | 'admin' | 'owner' | 'apiKey';
  /** Every case acts on the `member` user's channel, watchlist or connections; `member` is the user themself. */
  const subject = () => users.member;
  const authOf = (caller: Caller): Auth => (caller === 'apiKey' ? { apiKey: project.apiKey } : { token: tokens[caller] });
  const watchedIds = async () =>
    ((await api(`/users/${subject()}/watchlist`, { apiKey: project.apiKey })).body.targets as any[]).map((target) => target.targetId);

  interface UserRule {
    readonly route: string;
    readonly success: number;
    act(auth: Auth): Promise<ApiResponse & { check?: (allowed: boolean) => Promise<void> }>;
  }

  const rules: UserRule[] = [
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
  ];

  const callers: { caller: Caller; allowed: boolean }[] = [
    { caller: 'guest', allowed: false },
    { caller: 'member', allowed: true },
    { caller: 'roomOwner', allowed: false },
    { caller: 'moderator', allowed: false },
    { caller: 'admin', allowed: true },
    { caller: 'owner', allowed: true },
    { caller: 'apiKey', allowed: true },
  ];

  it('has a rule for every route that acts on a user id', () => {
    // Assess
    expect(rules.map((rule) => rule.route).sort()).toEqual(
      httpRoutes
        .filter((route) => route.path.startsWith('/users/{userId}') && route.auth === 'userOrService')
        .map((route) => route.id)
        .sort(),
    );
  });

  describe.each(rules)('$route', (rule) => {
    it.each(callers)('as $caller (allowed: $allowed)', async ({ caller, allowed }) => {
      // Act
      const response = await rule.act(authOf(caller));

      // Assess
      if (allowed) expect({ status: response.status, error: response.body?.error }).toEqual({ status: rule.success, error: undefined });
      else expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
      await response.check?.(allowed);
    });
  });
});

describe("push routes on the caller's own targets: every role with a user JWT, never the API key", () => {
  type Caller = keyof typeof users | 'apiKey';
  /** Whose targets a case prepares: the caller's own; for the API key (no user), the `member` user's, which must stay untouched. */
  const ownerOf = (caller: Caller) => {
    const user = caller === 'apiKey' ? 'member' : caller;
    return { userId: users[user], token: tokens[user] };
  };
  const authOf = (caller: Caller): Auth => (caller === 'apiKey' ? { apiKey: project.apiKey } : { token: tokens[caller] });
  const deviceIds = async (token: string) => ((await api('/push/devices', { token })).body.devices as any[]).map((d) => d.id);
  const subscriptionIds = async (token: string) =>
    ((await api('/push/web/subscriptions', { token })).body.subscriptions as any[]).map((s) => s.id);
  const registered = async (token: string) =>
    (await api('/push/devices', { token, body: { platform: 'fcm', token: fcmToken() } })).body.id as string;
  const subscribed = async (token: string) => (await api('/push/web/subscribe', { token, body: newSubscription() })).body.id as string;
  /** A push sent to the user, written as the sender writes one (the shared runtime may not reach a sender in a test). */
  async function seedPush(userId: string) {
    const { pushId, key } = await seedPushRecord(project.projectId, userId);
    return { pushId, status: async () => (await get(key.pk, key.sk))?.status };
  }

  interface OwnRule {
    readonly route: string;
    readonly success: number;
    act(auth: Auth, owner: { userId: string; token: string }): Promise<ApiResponse & { check?: (allowed: boolean) => Promise<void> }>;
  }

  const rules: OwnRule[] = [
    {
      route: 'RegisterPushDevice',
      success: 201,
      async act(auth, owner) {
        const response = await api('/push/devices', { ...auth, body: { platform: 'fcm', token: fcmToken() } });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(await deviceIds(owner.token)).toContain(response.body.id);
          },
        };
      },
    },
    {
      route: 'ListPushDevices',
      success: 200,
      async act(auth, owner) {
        const deviceId = await registered(owner.token);
        const response = await api('/push/devices', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.devices.map((d: any) => d.id)).toContain(deviceId);
          },
        };
      },
    },
    {
      route: 'DeletePushDevice',
      success: 204,
      async act(auth, owner) {
        const deviceId = await registered(owner.token);
        const response = await api(`/push/devices/${deviceId}`, { ...auth, method: 'DELETE' });
        return { ...response, check: async (allowed) => expect((await deviceIds(owner.token)).includes(deviceId)).toBe(!allowed) };
      },
    },
    {
      route: 'SubscribeWebPush',
      success: 201,
      async act(auth, owner) {
        const response = await api('/push/web/subscribe', { ...auth, body: newSubscription() });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(await subscriptionIds(owner.token)).toContain(response.body.id);
          },
        };
      },
    },
    {
      route: 'UnsubscribeWebPush',
      success: 204,
      async act(auth, owner) {
        const subscriptionId = await subscribed(owner.token);
        const response = await api(`/push/web/subscribe/${subscriptionId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await subscriptionIds(owner.token)).includes(subscriptionId)).toBe(!allowed),
        };
      },
    },
    {
      route: 'ListWebPushSubscriptions',
      success: 200,
      async act(auth, owner) {
        const subscriptionId = await subscribed(owner.token);
        const response = await api('/push/web/subscriptions', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.subscriptions.map((s: any) => s.id)).toContain(subscriptionId);
          },
        };
      },
    },
    {
      route: 'AcknowledgePushDelivery',
      success: 200,
      async act(auth, owner) {
        const push = await seedPush(owner.userId);
        const response = await api('/push/delivery-ack', { ...auth, body: { pushId: push.pushId } });
        return { ...response, check: async (allowed) => expect(await push.status()).toBe(allowed ? 'delivered' : 'sent') };
      },
    },
  ];

  const callers: { caller: Caller; allowed: boolean }[] = [
    { caller: 'guest', allowed: true },
    { caller: 'member', allowed: true },
    { caller: 'roomOwner', allowed: true },
    { caller: 'moderator', allowed: true },
    { caller: 'admin', allowed: true },
    { caller: 'owner', allowed: true },
    { caller: 'apiKey', allowed: false },
  ];

  it('has a rule for every push route that takes a user JWT only', () => {
    // Assess
    expect(rules.map((rule) => rule.route).sort()).toEqual(
      httpRoutes
        .filter((route) => route.path.startsWith('/push/') && route.auth === 'user')
        .map((route) => route.id)
        .sort(),
    );
  });

  describe.each(rules)('$route', (rule) => {
    it.each(callers)('as $caller (allowed: $allowed)', async ({ caller, allowed }) => {
      // Act
      const response = await rule.act(authOf(caller), ownerOf(caller));

      // Assess
      if (allowed) expect({ status: response.status, error: response.body?.error }).toEqual({ status: rule.success, error: undefined });
      else expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 401, code: 'missing_credentials' });
      await response.check?.(allowed);
    });
  });
});

describe('AI reads of the whole project: every role with a user JWT and the API key', () => {
  type Caller = keyof typeof users | 'apiKey';
  const authOf = (caller: Caller): Auth => (caller === 'apiKey' ? { apiKey: project.apiKey } : { token: tokens[caller] });

  interface ReadRule {
    readonly route: string;
    act(auth: Auth): Promise<ApiResponse & { check: () => Promise<void> }>;
  }

  const rules: ReadRule[] = [
    {
      route: 'ListAgents',
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Listed' });
        const response = await api('/agents', auth);
        return { ...response, check: async () => expect(response.body.agents.map((listed: any) => listed.id)).toContain(agent.id) };
      },
    },
    {
      route: 'ListDispositions',
      async act(auth) {
        const response = await api('/agent-queue/dispositions', auth);
        return {
          ...response,
          check: async () =>
            expect(response.body.dispositions.filter((entry: any) => entry.builtIn).map((entry: any) => entry.code)).toEqual([
              'resolved',
              'escalated',
              'follow_up',
              'no_response',
              'spam',
            ]),
        };
      },
    },
  ];

  it('has a rule for every AI route of the whole project without a minimum role', () => {
    // Assess
    expect(rules.map((rule) => rule.route).sort()).toEqual(
      httpRoutes
        .filter(
          (route) => route.handler.startsWith('http/ai/') && route.auth === 'userOrService' && !route.minRole && !route.path.includes('{'),
        )
        .map((route) => route.id)
        .sort(),
    );
  });

  describe.each(rules)('$route', (rule) => {
    it.each([...(Object.keys(users) as Caller[]), 'apiKey' as const])('as %s', async (caller) => {
      // Act
      const response = await rule.act(authOf(caller));

      // Assess
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
      await response.check();
    });
  });
});
