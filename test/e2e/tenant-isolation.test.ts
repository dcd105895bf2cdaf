import { createHmac, randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushRecordKey } from '#shared/db/push-record';
import { httpRoutes } from '#wiring';
import { agentHandle, createAgent, operatorHeaders, postThread, seedRoomSummary, setAiQuota } from '../support/ai/fixtures';
import { api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { fcmToken, pushEndpoint, seedPushRecord, subscriptionKeys } from '../support/push/fixtures';
import { get } from '../support/raw-table';
import { openSse } from '../support/sse';
import { connectUser, connectWelcomed, type RoomSocket, tryConnect } from '../support/ws';

/**
 * Project A's credentials against project B's data, route by route. A's callers are as strong as
 * A allows (an admin JWT, the API key) and A's user shares B's user id, so only the tenant boundary
 * can turn them away. Every route of the wiring table must have a case here.
 */

let a: TestProject;
let b: TestProject;
/** The same user id exists in both projects. */
const sharedUserId = uniqueId('bob');
let aAdmin: string;
let aMember: string;
let bMember: string;
let bRoomId: string;
let bPublicRoomId: string;
let bDmRoomId: string;
let bMessage: any;
let aRoomId: string;
/** A webhook of each project; B's secret is known to the test (as to B) and never to A. */
let aWebhook: any;
let bWebhook: any;

/** B's push configurations (B's own environment and the default one); A never sees their fields or key. */
let bPushConfigs: any[];

/**
 * B's AI data, all in a room of its own (so the rooms above keep their exact history): a thread of
 * three messages, a room summary, an agent, an active handoff with its claimed task, a disposition
 * code of B's own and a monthly AI quota of B's own (cleared after the file).
 */
let bAiRoomId: string;
let bThread: { rootId: number; replyIds: number[] };
let bSummary: Awaited<ReturnType<typeof seedRoomSummary>>;
let bAgent: Awaited<ReturnType<typeof createAgent>>;
let bHandoff: any;
let bAiHistory: any[];

const B_PASSWORD = 'b-password-123';
const B_FCM_SERVER_KEY = 'b-fcm-legacy-server-key-0123456789';
const B_FCM_PROJECT = 'b-firebase-project';
const B_PUSH_ENVIRONMENT = 'b-staging';
const A_WEBHOOK_SECRET = 'a-webhook-secret-0123456789';
const B_WEBHOOK_SECRET = 'b-webhook-secret-0123456789';
const B_WEBHOOK_URL = 'https://example.com/b-private-hook';
const B_AGENT_INSTRUCTIONS = 'b-secret-instructions: never mention the merger';
const B_HANDOFF_NOTE = 'b-secret-handoff-note';
const B_SUMMARY = '- b-secret-summary of the room';
const B_DISPOSITION = { code: 'b_secret_code', label: 'B secret label' };
const B_AI_QUOTA = 4321;
const NOT_FOUND = { status: 404, body: { error: { code: 'room_not_found' } } };

beforeAll(async () => {
  [a, b] = await Promise.all([createTestProject('tenant-a'), createTestProject('tenant-b')]);
  [aAdmin, aMember, bMember] = await Promise.all([
    a.token(sharedUserId, ['admin']),
    a.token(sharedUserId),
    b.token(sharedUserId, ['member']),
  ]);
  bRoomId = uniqueId('b-room');
  bPublicRoomId = uniqueId('b-public');
  aRoomId = uniqueId('a-room');
  await api('/rooms', { token: bMember, body: { id: bRoomId, type: 'group', name: 'B room', members: ['b-friend'] } });
  await api('/rooms', { token: bMember, body: { id: bPublicRoomId, type: 'public', name: 'B public' } });
  bDmRoomId = (await api('/rooms', { token: bMember, body: { type: 'dm', members: ['carol'] } })).body.id;
  await api('/rooms', { token: aMember, body: { id: aRoomId, type: 'group' } });
  await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: b.apiKey, body: { terms: ['b-secret-term'] } });
  bMessage = (await api('/messages', { token: bMember, body: { roomId: bRoomId, content: 'B private b-secret-term' } })).body;
  await api(`/users/${sharedUserId}/credentials`, { method: 'PUT', apiKey: b.apiKey, body: { password: B_PASSWORD } });
  [aWebhook, bWebhook] = await Promise.all([
    api('/webhooks/register', {
      apiKey: a.apiKey,
      body: { url: 'https://example.com/a-hook', eventTypes: ['message.created'], secret: A_WEBHOOK_SECRET },
    }).then((response) => response.body),
    api('/webhooks/register', {
      apiKey: b.apiKey,
      body: { url: B_WEBHOOK_URL, eventTypes: ['message.created', 'mention'], secret: B_WEBHOOK_SECRET },
    }).then((response) => response.body),
  ]);
  for (const environment of ['production', B_PUSH_ENVIRONMENT]) {
    await api('/push/config', {
      method: 'PUT',
      apiKey: b.apiKey,
      body: {
        environment,
        fcmServerKey: B_FCM_SERVER_KEY,
        fcmProjectId: B_FCM_PROJECT,
        apnsBundleId: 'com.example.b',
        webPushEnabled: false,
      },
    });
  }
  bPushConfigs = (await api('/push/config', { apiKey: b.apiKey })).body.configs;

  bAiRoomId = uniqueId('b-ai-room');
  await api('/rooms', { token: bMember, body: { id: bAiRoomId, type: 'group', name: 'B AI room', members: ['b-friend'] } });
  bThread = await postThread(b.projectId, { token: bMember }, bAiRoomId);
  [bSummary, bAgent] = await Promise.all([
    seedRoomSummary(b.projectId, bAiRoomId, { summary: B_SUMMARY }),
    createAgent({ apiKey: b.apiKey }, { name: 'B agent', instructions: B_AGENT_INSTRUCTIONS }),
    api('/admin/agent-queue/dispositions', { method: 'PUT', apiKey: b.apiKey, body: { dispositions: [B_DISPOSITION] } }),
    setAiQuota(b.projectId, B_AI_QUOTA),
  ]);
  bHandoff = (await api(`/rooms/${bAiRoomId}/handoff`, { method: 'POST', apiKey: b.apiKey, body: { note: B_HANDOFF_NOTE } })).body;
  bAiHistory = (await api(`/rooms/${bAiRoomId}/messages`, { apiKey: b.apiKey })).body.messages;
});

afterAll(async () => {
  // Both projects back on the runtime's default quota (the AI quota cases set A's too).
  await Promise.all([a, b].filter(Boolean).map((project) => setAiQuota(project.projectId, null)));
});

/** A's two strongest callers for routes that take either. */
const aCallers = () => [
  { who: 'admin JWT', auth: { token: aAdmin } },
  { who: 'API key', auth: { apiKey: a.apiKey } },
];
const bRooms = () => [bRoomId, bPublicRoomId, bDmRoomId];

/** B's view of its own data, to show A's attempts changed nothing. */
const bHistory = async (roomId = bRoomId) => (await api(`/rooms/${roomId}/messages`, { apiKey: b.apiKey })).body.messages;
const bMembers = async (roomId = bRoomId) =>
  ((await api(`/rooms/${roomId}/members`, { apiKey: b.apiKey })).body.members as any[]).map((m) => [m.userId, m.role]).sort();
const bRoom = async (roomId = bRoomId) => (await api(`/rooms/${roomId}`, { apiKey: b.apiKey })).body;
const bWebhooks = async () => (await api('/webhooks', { apiKey: b.apiKey })).body.webhooks as any[];
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');
/** A well-formed delivery id; the shared runtime runs no queue consumers, so no project has deliveries. */
const unknownDeliveryId = () => `whd_${randomBytes(16).toString('hex')}`;

/** A's users with a user JWT, for the push routes, which act on the caller's own targets and take no API key. */
const aUsers = () => [
  { who: 'admin JWT', token: aAdmin },
  { who: 'member JWT', token: aMember },
];
/** Push targets of B's user (the shared id), made fresh per case so cases do not lean on each other. */
const registerDevice = async (token: string, deviceToken = fcmToken()) =>
  (await api('/push/devices', { token, body: { platform: 'fcm', token: deviceToken } })).body;
const subscribe = async (token: string, endpoint = pushEndpoint('b-push.example.com')) =>
  (await api('/push/web/subscribe', { token, body: { endpoint, keys: subscriptionKeys() } })).body;
const devicesOf = async (token: string) => (await api('/push/devices', { token })).body.devices as any[];
const subscriptionsOf = async (token: string) => (await api('/push/web/subscriptions', { token })).body.subscriptions as any[];
const seedPush = async (projectId: string, userId: string) => (await seedPushRecord(projectId, userId)).pushId;
const pushRecordOf = async (projectId: string, pushId: string) => {
  const key = pushRecordKey(projectId, pushId);
  return get(key.pk, key.sk);
};

/** B's AI data as B reads it, to show A's attempts changed nothing. */
const bAgents = async () => (await api('/agents', { apiKey: b.apiKey })).body.agents as any[];
const bHandoffNow = async () => (await api(`/rooms/${bAiRoomId}/handoff`, { apiKey: b.apiKey })).body;
const bTasks = async (status: 'claimed' | 'resolved') =>
  (await api(`/agent-queue/tasks?status=${status}&limit=100`, { apiKey: b.apiKey })).body.tasks as any[];
const bDispositions = async () => (await api('/agent-queue/dispositions', { apiKey: b.apiKey })).body.dispositions as any[];
const usageOf = async (apiKey: string) => (await api('/admin/ai/usage', { apiKey })).body;
/** Every room of B, the AI room included. */
const bAllRooms = () => [...bRooms(), bAiRoomId];

/** Expects every response to be a 404 with the code (room_not_found unless given), naming the attempt on failure. */
async function expectAllNotFound(
  attempts: { label: string; call: () => Promise<{ status: number; body: any }> }[],
  code = 'room_not_found',
) {
  const results = await Promise.all(attempts.map(async ({ label, call }) => ({ label, response: await call() })));
  for (const { label, response } of results) {
    expect({ label, status: response.status, code: response.body?.error?.code }).toEqual({ label, status: 404, code });
  }
}

const cases: Record<string, () => Promise<void>> = {
  async GetHealth() {
    // Act
    const health = await api('/health', { apiKey: a.apiKey });

    // Assess: no tenant data at all
    expect(health.status).toBe(200);
    expect(Object.keys(health.body).sort()).toEqual(['dependencies', 'status', 'time']);
    expect(JSON.stringify(health.body)).not.toContain(b.projectId);
  },

  async CreateProject() {
    // Act
    const takeover = await api('/platform/projects', {
      headers: { 'x-service-operator-key': runtime().operatorKey },
      body: { name: 'takeover', projectId: b.projectId },
    });
    const byTenant = await api('/platform/projects', { apiKey: a.apiKey, body: { name: 'x', projectId: uniqueId('p').toLowerCase() } });

    // Assess
    expect(takeover).toMatchObject({ status: 409, body: { error: { code: 'project_exists' } } });
    expect(byTenant.status).toBe(401);
    expect((await api('/rooms', { token: bMember })).status).toBe(200);
    expect((await api('/auth/token', { apiKey: b.apiKey, body: { userId: 'u' } })).status).toBe(201);
  },

  async RotateProjectKeys() {
    // Act
    const byKey = await api(`/platform/projects/${b.projectId}/rotate-keys`, { apiKey: a.apiKey, body: { signingSecret: true } });
    const byAdmin = await api(`/platform/projects/${b.projectId}/rotate-keys`, { token: aAdmin, body: { signingSecret: true } });

    // Assess
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(byAdmin).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect((await api('/auth/token', { apiKey: b.apiKey, body: { userId: 'u' } })).status).toBe(201);
    expect((await api('/rooms', { token: bMember })).status).toBe(200);
  },

  async CreateToken() {
    // Act
    const minted = await api('/auth/token', { apiKey: a.apiKey, body: { userId: sharedUserId, roles: ['owner'] } });
    const smuggled = await api('/auth/token', { apiKey: a.apiKey, body: { userId: sharedUserId, projectId: b.projectId } });

    // Assess
    expect(minted.status).toBe(201);
    expect(decodeJwt(minted.body.token).projectId).toBe(a.projectId);
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    await expectAllNotFound(
      bRooms().map((roomId) => ({ label: roomId, call: () => api(`/rooms/${roomId}`, { token: minted.body.token }) })),
    );
  },

  async SignIn() {
    // Act
    const intoA = await api('/auth/signin', { body: { projectId: a.projectId, userId: sharedUserId, password: B_PASSWORD } });
    const intoB = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: B_PASSWORD } });

    // Assess
    expect(intoA).toMatchObject({ status: 401, body: { error: { code: 'invalid_credentials' } } });
    expect(intoB.status).toBe(200);
    expect(decodeJwt(intoB.body.token).projectId).toBe(b.projectId);
    expect(await api(`/rooms/${aRoomId}`, { token: intoB.body.token })).toMatchObject(NOT_FOUND);
  },

  async SetUserCredentials() {
    // Act
    const set = await api(`/users/${sharedUserId}/credentials`, { method: 'PUT', apiKey: a.apiKey, body: { password: 'a-password-456' } });

    // Assess
    expect(set.status).toBe(204);
    const withA = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: 'a-password-456' } });
    const withB = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: B_PASSWORD } });
    expect(withA).toMatchObject({ status: 401, body: { error: { code: 'invalid_credentials' } } });
    expect(withB.status).toBe(200);
  },

  async CreateRoom() {
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

  async ListRooms() {
    // Act
    const mine = await api('/rooms?limit=100', { token: aMember });
    const publicRooms = await api('/rooms?scope=public&limit=100', { token: aMember });

    // Assess
    const ids = [...mine.body.rooms, ...publicRooms.body.rooms].map((r: any) => r.id);
    for (const roomId of bRooms()) expect(ids).not.toContain(roomId);
    expect(mine.body.rooms.map((r: any) => r.id)).toContain(aRoomId);
  },

  async GetRoom() {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}`, auth) })),
      ),
    );
  },

  async UpdateRoom() {
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

  async ListRoomMembers() {
    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/members`, auth) })),
      ),
    );
  },

  async AddRoomMember() {
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

  async RemoveRoomMember() {
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

  async GetRoomE2eKey() {
    // Act + Assess
    await expectAllNotFound(
      [aAdmin, aMember].flatMap((token) =>
        bRooms().map((roomId) => ({ label: `${roomId}`, call: () => api(`/rooms/${roomId}/e2e-key`, { token }) })),
      ),
    );
  },

  async CreateMessage() {
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

  async ListRoomMessages() {
    // Act + Assess
    await expectAllNotFound([
      ...aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/messages`, auth) })),
      ),
      { label: 'member after', call: () => api(`/rooms/${bRoomId}/messages?after=0`, { token: aMember }) },
    ]);
    expect(await bMembers(bPublicRoomId)).toEqual([[sharedUserId, 'owner']]);
  },

  async PostRoomMessage() {
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

  async ImportMessage() {
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

  async ImportMessageBatch() {
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

  async GetBlockList() {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/admin/moderation/blocklist', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.terms).not.toContain('b-secret-term');
    }
  },

  async ReplaceBlockList() {
    // Act
    const replaced = await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: a.apiKey, body: { terms: ['a-only-term'] } });

    // Assess
    expect(replaced.status).toBe(200);
    expect((await api('/admin/moderation/blocklist', { apiKey: b.apiKey })).body.terms).toEqual(['b-secret-term']);
    const clean = await api('/messages', { token: bMember, body: { roomId: bRoomId, content: 'mentions a-only-term' } });
    expect(clean.body.moderation).toBeNull();
  },

  async ListModerationFlags() {
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

  async ListWebhookEventTypes() {
    // Act
    const [withA, withB, anonymous] = await Promise.all([
      api('/webhooks/event-types', { apiKey: a.apiKey }),
      api('/webhooks/event-types', { apiKey: b.apiKey }),
      api('/webhooks/event-types'),
    ]);

    // Assess: no tenant data at all, the same catalogue for everyone
    expect(withA.status).toBe(200);
    expect(Object.keys(withA.body)).toEqual(['events']);
    expect(JSON.stringify(withA.body)).not.toContain(b.projectId);
    expect(withB.body).toEqual(withA.body);
    expect(anonymous.body).toEqual(withA.body);
  },

  async RegisterWebhook() {
    // Prepare
    const before = await bWebhooks();

    // Act
    const registered = await Promise.all(
      aCallers().map(({ auth }) =>
        api('/webhooks/register', { ...auth, body: { url: 'https://example.com/a-second-hook', eventTypes: ['mention'] } }),
      ),
    );
    const smuggled = await api('/webhooks/register', {
      apiKey: a.apiKey,
      body: { url: 'https://example.com/a-hook', eventTypes: ['mention'], projectId: b.projectId },
    });

    // Assess: A's registrations are A's (the id names A), B's list is as it was
    for (const response of registered) {
      expect(response.status).toBe(201);
      expect(response.body.id.startsWith(`wh_${a.projectId}_`)).toBe(true);
    }
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await bWebhooks()).toEqual(before);
  },

  async ListWebhooks() {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/webhooks', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      const ids = list.body.webhooks.map((webhook: any) => webhook.id);
      expect(ids).toContain(aWebhook.id);
      expect(ids).not.toContain(bWebhook.id);
      for (const id of ids) expect(id.startsWith(`wh_${a.projectId}_`)).toBe(true);
      expect(JSON.stringify(list.body)).not.toContain(B_WEBHOOK_URL);
    }
    expect((await bWebhooks()).map((webhook) => webhook.id)).toEqual([bWebhook.id]);
  },

  async DeleteWebhook() {
    // Prepare: B's id, and B's random part under A's project prefix
    const bRandom = bWebhook.id.slice(`wh_${b.projectId}_`.length);

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        [bWebhook.id, `wh_${a.projectId}_${bRandom}`].map((webhookId) => ({
          label: `${who} ${webhookId}`,
          call: () => api(`/webhooks/${webhookId}`, { ...auth, method: 'DELETE' }),
        })),
      ),
      'webhook_not_found',
    );
    expect((await bWebhooks()).map((webhook) => webhook.id)).toEqual([bWebhook.id]);
  },

  async VerifyWebhook() {
    // Prepare: public by design, anyone holding a body and its signature may check them against B's webhook
    const body = JSON.stringify({ type: 'message.created', projectId: b.projectId });

    // Act
    const signedByB = await api('/webhooks/verify', {
      apiKey: a.apiKey,
      body: { webhookId: bWebhook.id, body, signature: sign(B_WEBHOOK_SECRET, body) },
    });
    const signedByA = await api('/webhooks/verify', {
      token: aAdmin,
      body: { webhookId: bWebhook.id, body, signature: sign(A_WEBHOOK_SECRET, body) },
    });

    // Assess: only {valid}, no secret or registration detail; A's secret does not pass for B's webhook
    expect({ status: signedByB.status, body: signedByB.body }).toEqual({ status: 200, body: { valid: true } });
    expect({ status: signedByA.status, body: signedByA.body }).toEqual({ status: 200, body: { valid: false } });
    for (const response of [signedByB, signedByA]) {
      const text = JSON.stringify(response.body);
      for (const leak of [B_WEBHOOK_SECRET, B_WEBHOOK_URL, bWebhook.createdAt]) expect(text).not.toContain(leak);
    }
  },

  async VerifyWebhookSignatures() {
    // Prepare
    const body = 'tenant-free payload';

    // Act
    const checked = await api('/webhooks/verify-batch', {
      apiKey: a.apiKey,
      body: { secret: A_WEBHOOK_SECRET, body, signature: sign(A_WEBHOOK_SECRET, body) },
    });
    const lookup = await api('/webhooks/verify-batch', {
      apiKey: a.apiKey,
      body: { webhookId: bWebhook.id, body, signature: sign(B_WEBHOOK_SECRET, body) },
    });

    // Assess: no tenant data at all; the caller brings the secret and cannot have a registered one looked up
    expect({ status: checked.status, body: checked.body }).toEqual({ status: 200, body: { valid: true } });
    expect(lookup).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(JSON.stringify(lookup.body)).not.toContain(B_WEBHOOK_SECRET);
  },

  async ListWebhookDeliveries() {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/admin/webhooks/deliveries?limit=100', auth)));

    // Assess: A has no deliveries, so anything listed would be another tenant's
    for (const list of lists) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { deliveries: [] } });
  },

  async ReplayWebhookDelivery() {
    // Act + Assess: an id A does not own answers as an id that does not exist
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => {
        const deliveryId = unknownDeliveryId();
        return {
          label: `${who} ${deliveryId}`,
          call: () => api(`/admin/webhooks/deliveries/${deliveryId}/replay`, { ...auth, method: 'POST' }),
        };
      }),
      'delivery_not_found',
    );
  },
  async StreamRoom() {
    // Act
    const attempts = await Promise.all(
      [aAdmin, aMember].flatMap((token) =>
        bRooms().map(async (roomId) => {
          const sse = await openSse(`/rooms/${roomId}/stream`, { token });
          sse.close();
          return { roomId, status: sse.status, code: sse.body?.error?.code };
        }),
      ),
    );

    // Assess
    for (const attempt of attempts) expect(attempt).toEqual({ roomId: attempt.roomId, status: 404, code: 'room_not_found' });
  },

  async PublishEvents() {
    // Prepare: B listens on its room, with B's cached event in place
    await api('/events', { apiKey: b.apiKey, body: { roomIds: [bRoomId], name: 'b-cached' } });
    const bSocket = await connectWelcomed(bRoomId, bMember, { history: 0 });

    try {
      // Act
      const responses = await Promise.all(
        [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) =>
          api('/events', { ...auth, body: { roomIds: [...bRooms(), aRoomId], name: 'from-a' } }),
        ),
      );
      await api('/events', { apiKey: b.apiKey, body: { roomIds: [bRoomId], name: 'b-marker' } });
      await bSocket.next((frame) => frame.event === 'b-marker');

      // Assess: B's rooms are skipped like rooms that do not exist; B heard and cached only B
      for (const response of responses) {
        expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: [aRoomId], skipped: bRooms() } });
      }
      expect(bSocket.ofType('event').map((frame) => frame.event)).toEqual(['b-marker']);
    } finally {
      await bSocket.close();
    }
    const replay = await connectWelcomed(bRoomId, bMember, { history: 0, cache: true });
    await replay.close();
    expect(replay.ofType('event')).toMatchObject([{ event: 'b-marker', cached: true }]);
  },

  async PublishUserEvent() {
    // Prepare: B's user with the shared id listens on B's user channel
    const bChannel = await connectUser(sharedUserId, bMember);

    try {
      // Act
      const responses = await Promise.all(
        aCallers().map(({ auth }) => api(`/users/${sharedUserId}/events`, { ...auth, body: { name: 'from-a', data: {} } })),
      );
      await api(`/users/${sharedUserId}/events`, { apiKey: b.apiKey, body: { name: 'b-marker' } });
      await bChannel.next((frame) => frame.event === 'b-marker');

      // Assess: A reaches A's user of that id (who has no connection), never B's
      for (const response of responses)
        expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: 0 } });
      expect(bChannel.ofType('notification').map((frame) => frame.event)).toEqual(['b-marker']);
    } finally {
      await bChannel.close();
    }
  },

  async CloseUserConnections() {
    // Prepare
    const bSockets: RoomSocket[] = [await connectWelcomed(bRoomId, bMember, { history: 0 }), await connectUser(sharedUserId, bMember)];

    try {
      // Act
      const responses = await Promise.all(
        aCallers().map(({ auth }) => api(`/users/${sharedUserId}/connections`, { ...auth, method: 'DELETE' })),
      );
      for (const socket of bSockets) {
        socket.send({ type: 'ping' });
        await socket.next((frame) => frame.type === 'pong');
      }

      // Assess
      for (const response of responses)
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { closed: 0 } });
      for (const socket of bSockets) expect(socket.isOpen).toBe(true);
    } finally {
      await Promise.all(bSockets.map((socket) => socket.close()));
    }
  },

  async ListWatchlist() {
    // Prepare
    await api(`/users/${sharedUserId}/watchlist`, { token: bMember, body: { type: 'room', targetId: bRoomId } });

    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api(`/users/${sharedUserId}/watchlist`, auth)));

    // Assess
    for (const list of lists) expect(JSON.stringify(list.body)).not.toContain(bRoomId);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body.targets.map((t: any) => t.targetId)).toContain(bRoomId);
  },

  async AddWatchlistTarget() {
    // Prepare
    const bBefore = (await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body;

    // Act + Assess: B's rooms do not exist for A
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/users/${sharedUserId}/watchlist`, { ...auth, body: { type: 'room', targetId: roomId } }),
        })),
      ),
    );
    const byUser = await api(`/users/${sharedUserId}/watchlist`, { apiKey: a.apiKey, body: { type: 'user', targetId: 'b-friend' } });
    expect(byUser.status).toBe(201);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body).toEqual(bBefore);
  },

  async RemoveWatchlistTarget() {
    // Prepare
    await api(`/users/${sharedUserId}/watchlist`, { token: bMember, body: { type: 'room', targetId: bRoomId } });

    // Act
    const responses = await Promise.all(
      aCallers().map(({ auth }) =>
        api(`/users/${sharedUserId}/watchlist`, { ...auth, method: 'DELETE', body: { type: 'room', targetId: bRoomId } }),
      ),
    );

    // Assess: a 204 in A's own (empty) list; B's list keeps the room
    for (const response of responses) expect(response.status).toBe(204);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body.targets.map((t: any) => t.targetId)).toContain(bRoomId);
  },

  async GetFeatureFlags() {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { voice_messages: false } } });

    // Act
    const withA = await api('/client/feature-flags', { token: aMember });

    // Assess
    expect(withA.status).toBe(200);
    expect(withA.body).toMatchObject({ flagship: true, flags: { voice_messages: true } });
    expect((await api('/client/feature-flags', { token: bMember })).body.flags.voice_messages).toBe(false);
  },

  async GetProjectFeatureFlags() {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { reply_suggestions: false } } });

    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/admin/feature-flags', auth)));

    // Assess
    for (const read of reads) expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { overrides: {} } });
  },

  async SetProjectFeatureFlags() {
    // Prepare
    await api('/admin/feature-flags', { apiKey: b.apiKey, method: 'PUT', body: { overrides: { embed_widget: true } } });

    // Act
    const sets = await Promise.all(
      aCallers().map(({ auth }) => api('/admin/feature-flags', { ...auth, method: 'PUT', body: { overrides: { embed_widget: false } } })),
    );

    // Assess
    for (const set of sets) expect(set.status).toBe(200);
    expect((await api('/admin/feature-flags', { apiKey: b.apiKey })).body).toEqual({ overrides: { embed_widget: true } });
    expect((await api('/client/feature-flags', { token: bMember })).body.flags.embed_widget).toBe(true);
    await api('/admin/feature-flags', { apiKey: a.apiKey, method: 'PUT', body: { overrides: {} } });
  },

  async RegisterPushDevice() {
    // Prepare: B's user holds a device token
    const deviceToken = fcmToken();
    const bDevice = await registerDevice(bMember, deviceToken);

    // Act: A's user of the same id registers the same token in A; the API key is no user
    const inA = await api('/push/devices', { token: aMember, body: { platform: 'android', token: deviceToken } });
    const byKey = await api('/push/devices', { apiKey: a.apiKey, body: { platform: 'fcm', token: fcmToken() } });
    const smuggled = await api('/push/devices', { token: aAdmin, body: { platform: 'fcm', token: fcmToken(), projectId: b.projectId } });

    // Assess: A gets a device of its own (201, another id); the token stays B's in B, as it was
    expect(inA.status).toBe(201);
    expect(inA.body.id).not.toBe(bDevice.id);
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
    expect((await devicesOf(aMember)).map((device) => device.id)).not.toContain(bDevice.id);
  },

  async ListPushDevices() {
    // Prepare
    const bDevice = await registerDevice(bMember);

    // Act
    const lists = await Promise.all(aUsers().map(({ token }) => api('/push/devices', { token })));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.devices.map((device: any) => device.id)).not.toContain(bDevice.id);
      expect(JSON.stringify(list.body)).not.toContain(bDevice.token);
    }
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
  },

  async DeletePushDevice() {
    // Prepare: B's device, and A's own device of the same token (another id, in A)
    const deviceToken = fcmToken();
    const bDevice = await registerDevice(bMember, deviceToken);
    const aDevice = await registerDevice(aMember, deviceToken);

    // Act + Assess
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({
        label: `${who} ${bDevice.id}`,
        call: () => api(`/push/devices/${bDevice.id}`, { token, method: 'DELETE' }),
      })),
      'device_not_found',
    );
    expect((await api(`/push/devices/${aDevice.id}`, { token: aMember, method: 'DELETE' })).status).toBe(204);
    expect(await devicesOf(bMember)).toContainEqual(bDevice);
  },

  async PutPushConfig() {
    // Act: B has a production configuration; A's first one of that environment is a new one of A's
    const first = await api('/push/config', {
      method: 'PUT',
      token: aAdmin,
      body: { environment: 'production', fcmProjectId: 'a-firebase-project', webPushEnabled: true },
    });
    const second = await api('/push/config', { method: 'PUT', apiKey: a.apiKey, body: { fcmServerKey: null, apnsBundleId: null } });
    const smuggled = await api('/push/config', { method: 'PUT', apiKey: a.apiKey, body: { webPushEnabled: true, projectId: b.projectId } });

    // Assess: A's rows only hold A's fields; B's configurations are as they were, key included
    expect({ status: first.status, environment: first.body.environment, fcmProjectId: first.body.fcmProjectId }).toEqual({
      status: 201,
      environment: 'production',
      fcmProjectId: 'a-firebase-project',
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ fcmProjectId: 'a-firebase-project', apnsBundleId: null, hasFcm: false });
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect((await api('/push/config', { apiKey: b.apiKey })).body.configs).toEqual(bPushConfigs);
    expect(bPushConfigs.find((config) => config.environment === 'production')).toMatchObject({ fcmProjectId: B_FCM_PROJECT, hasFcm: true });
  },

  async GetPushConfig() {
    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/push/config', auth)));

    // Assess: never B's environment, fields or key
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body.configs.map((config: any) => config.environment)).not.toContain(B_PUSH_ENVIRONMENT);
      for (const leak of [B_FCM_PROJECT, B_FCM_SERVER_KEY, 'com.example.b']) expect(JSON.stringify(read.body)).not.toContain(leak);
    }
  },

  async GetVapidPublicKey() {
    // Act: public by design, so A's credentials neither add nor take away anything; asked at once, first use included
    const [aKey, aAgain, bKey, bByHeader, bWithAKey] = await Promise.all([
      api(`/push/web/vapid-public-key?projectId=${a.projectId}`),
      api(`/push/web/vapid-public-key?projectId=${a.projectId}`, { token: aAdmin }),
      api(`/push/web/vapid-public-key?projectId=${b.projectId}`),
      api('/push/web/vapid-public-key', { headers: { 'x-service-project-id': b.projectId } }),
      api(`/push/web/vapid-public-key?projectId=${b.projectId}`, { apiKey: a.apiKey }),
    ]);

    // Assess: one key pair per project; B's public key is not A's
    for (const response of [aKey, aAgain, bKey, bByHeader, bWithAKey]) {
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['publicKey']);
      const point = Buffer.from(response.body.publicKey, 'base64url');
      expect({ length: point.length, first: point[0] }).toEqual({ length: 65, first: 0x04 });
    }
    expect(aAgain.body.publicKey).toBe(aKey.body.publicKey);
    expect(bByHeader.body.publicKey).toBe(bKey.body.publicKey);
    expect(bWithAKey.body.publicKey).toBe(bKey.body.publicKey);
    expect(bKey.body.publicKey).not.toBe(aKey.body.publicKey);
  },

  async SubscribeWebPush() {
    // Prepare: B's user holds a subscription
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act: A's user claims B's project in the header, then subscribes the same endpoint in A
    const claimed = await api('/push/web/subscribe', {
      token: aMember,
      headers: { 'x-service-project-id': b.projectId },
      body: { endpoint: pushEndpoint(), keys: subscriptionKeys() },
    });
    const sameEndpoint = await api('/push/web/subscribe', { token: aMember, body: { endpoint, keys: subscriptionKeys() } });
    const byKey = await api('/push/web/subscribe', { apiKey: a.apiKey, body: { endpoint: pushEndpoint(), keys: subscriptionKeys() } });

    // Assess: A's subscription is A's (201, another id); B's stays listed for B
    expect(claimed).toMatchObject({ status: 403, body: { error: { code: 'project_mismatch' } } });
    expect(sameEndpoint.status).toBe(201);
    expect(sameEndpoint.body.id).not.toBe(bSubscription.id);
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async UnsubscribeWebPush() {
    // Prepare
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act + Assess: by B's id and by B's endpoint
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bSubscription.id, encodeURIComponent(endpoint)].map((idOrEndpoint) => ({
          label: `${who} ${idOrEndpoint}`,
          call: () => api(`/push/web/subscribe/${idOrEndpoint}`, { token, method: 'DELETE' }),
        })),
      ),
      'subscription_not_found',
    );
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async ListWebPushSubscriptions() {
    // Prepare
    const endpoint = pushEndpoint();
    const bSubscription = await subscribe(bMember, endpoint);

    // Act
    const lists = await Promise.all(aUsers().map(({ token }) => api('/push/web/subscriptions', { token })));

    // Assess: neither B's id nor B's endpoint, whole or masked
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.subscriptions.map((subscription: any) => subscription.id)).not.toContain(bSubscription.id);
      for (const leak of [endpoint, bSubscription.endpoint]) expect(JSON.stringify(list.body)).not.toContain(leak);
    }
    expect(await subscriptionsOf(bMember)).toContainEqual(bSubscription);
  },

  async AcknowledgePushDelivery() {
    // Prepare: a push B sent to B's user of the shared id
    const pushId = await seedPush(b.projectId, sharedUserId);

    // Act + Assess: A's users of that id cannot acknowledge it
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({ label: who, call: () => api('/push/delivery-ack', { token, body: { pushId } }) })),
      'push_not_found',
    );
    expect(await pushRecordOf(b.projectId, pushId)).toMatchObject({ status: 'sent', userId: sharedUserId });
    expect(await pushRecordOf(b.projectId, pushId)).not.toHaveProperty('deliveredAt');
    expect(await pushRecordOf(a.projectId, pushId)).toBeUndefined();
    const byB = await api('/push/delivery-ack', { token: bMember, body: { pushId } });
    expect({ status: byB.status, body: byB.body }).toMatchObject({ status: 200, body: { pushId, status: 'delivered' } });
  },

  async SummarizeThread() {
    // Act + Assess: A's users of the shared id (one rate-limit budget in A) name B's rooms and messages
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) => [
        {
          label: `${who} B's thread in B's room`,
          call: () => api(`/messages/${bThread.rootId}/summary`, { token, body: { roomId: bAiRoomId } }),
        },
        {
          label: `${who} B's message in B's room`,
          call: () => api(`/messages/${bMessage.id}/summary`, { token, body: { roomId: bRoomId } }),
        },
      ]),
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bThread.rootId, bThread.replyIds[0] as number].map((messageId) => ({
          label: `${who} B's message ${messageId} in A's room`,
          call: () => api(`/messages/${messageId}/summary`, { token, body: { roomId: aRoomId } }),
        })),
      ),
      'message_not_found',
    );
    // A's user of the shared id spends the rest of its budget in A, up to a 429
    let spent: number | undefined;
    for (let call = 0; call < 15 && spent !== 429; call++) {
      spent = (await api(`/messages/${bThread.rootId}/summary`, { token: aMember, body: { roomId: aRoomId } })).status;
    }
    expect(spent).toBe(429);

    // Assess: B's user of the same id still summarizes B's thread (its budget is B's), which is as it was
    const byB = await api(`/messages/${bThread.replyIds[1]}/summary`, { token: bMember, body: { roomId: bAiRoomId } });
    expect({ status: byB.status, body: byB.body }).toEqual({
      status: 200,
      body: { summary: expect.stringMatching(/^- /), rootMessageId: bThread.rootId, messageCount: 3, truncated: false },
    });
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
  },

  async SuggestReplies() {
    // Prepare
    const before = await bHistory();

    // Act + Assess: B's rooms do not exist for A; B's message ids are not in A's room
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api('/messages/suggest-replies', { token, body: { roomId } }),
        })),
      ),
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bMessage.id, bThread.rootId].map((messageId) => ({
          label: `${who} B's message ${messageId} in A's room`,
          call: () => api('/messages/suggest-replies', { token, body: { roomId: aRoomId, messageId } }),
        })),
      ),
      'message_not_found',
    );
    const byKey = await api('/messages/suggest-replies', { apiKey: a.apiKey, body: { roomId: aRoomId } });
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await bHistory()).toEqual(before);
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
  },

  async ListRoomSummaries() {
    // Act
    const own = await Promise.all(aCallers().map(({ auth }) => api(`/rooms/${aRoomId}/summaries?limit=100`, auth)));

    // Assess
    await expectAllNotFound(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/summaries`, auth) })),
      ),
    );
    for (const list of own) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { summaries: [] } });
    expect((await api(`/rooms/${bAiRoomId}/summaries`, { apiKey: b.apiKey })).body.summaries).toEqual([bSummary]);
  },

  async GetAiUsage() {
    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/admin/ai/usage', auth)));

    // Assess: A's month and quota, never B's own quota or count
    const bUsage = await usageOf(b.apiKey);
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body).toEqual({
        month: bUsage.month,
        used: expect.any(Number),
        quota: expect.any(Number),
        remaining: expect.any(Number),
      });
      expect(read.body.quota).not.toBe(B_AI_QUOTA);
    }
    expect(bUsage).toMatchObject({ quota: B_AI_QUOTA, remaining: B_AI_QUOTA - bUsage.used });
    expect(bUsage.used).toBeGreaterThan(0);
  },

  async SetProjectAiQuota() {
    // Act: A's strongest callers name B's project (and A's own); only the operator key sets a quota
    const attempts = await Promise.all(
      aCallers().flatMap(({ auth }) =>
        [b.projectId, a.projectId].map((projectId) =>
          api(`/platform/projects/${projectId}/ai-quota`, { ...auth, method: 'PUT', body: { monthlyInvocations: 0 } }),
        ),
      ),
    );
    const aByOperator = await api(`/platform/projects/${a.projectId}/ai-quota`, {
      method: 'PUT',
      headers: operatorHeaders(),
      body: { monthlyInvocations: 1234 },
    });

    // Assess: B keeps its own quota; A's is A's
    for (const attempt of attempts) expect(attempt).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect({ status: aByOperator.status, quota: aByOperator.body.quota }).toEqual({ status: 200, quota: 1234 });
    expect((await usageOf(b.apiKey)).quota).toBe(B_AI_QUOTA);
    expect((await usageOf(a.apiKey)).quota).toBe(1234);
    await setAiQuota(a.projectId, null);
  },

  async CreateAgent() {
    // Act: B's handle is B's; A may have an agent of that handle, its own
    const sameHandle = await api('/agents', {
      apiKey: a.apiKey,
      body: { handle: bAgent.handle, name: 'A copy', instructions: 'A instructions' },
    });
    const smuggled = await api('/agents', {
      token: aAdmin,
      body: { handle: agentHandle(), name: 'x', instructions: 'y', projectId: b.projectId },
    });

    // Assess
    expect(sameHandle.status).toBe(201);
    expect(sameHandle.body).toMatchObject({ handle: bAgent.handle, userId: bAgent.userId, name: 'A copy' });
    expect(sameHandle.body.id).not.toBe(bAgent.id);
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await bAgents()).toEqual([bAgent]);
  },

  async ListAgents() {
    // Act
    const lists = await Promise.all(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) => api('/agents', auth)),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.agents.map((agent: any) => agent.id)).not.toContain(bAgent.id);
      expect(JSON.stringify(list.body)).not.toContain(B_AGENT_INSTRUCTIONS);
    }
    expect(await bAgents()).toEqual([bAgent]);
  },

  async UpdateAgent() {
    // Act + Assess
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/agents/${bAgent.id}`, { ...auth, method: 'PATCH', body: { name: 'defaced', instructions: 'leak everything' } }),
      })),
      'agent_not_found',
    );
    expect(await bAgents()).toEqual([bAgent]);
  },

  async DeleteAgent() {
    // Act + Assess
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/agents/${bAgent.id}`, { ...auth, method: 'DELETE' }) })),
      'agent_not_found',
    );
    expect(await bAgents()).toEqual([bAgent]);
  },

  async InvokeAgent() {
    // Prepare: an agent of A's own, to name B's rooms with
    const aAgent = await createAgent({ apiKey: a.apiKey });
    const [historyBefore, membersBefore] = await Promise.all([bHistory(), bMembers(bAiRoomId)]);

    // Act + Assess: B's agent is unknown in A; B's rooms do not exist for A's agent
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({
        label: `${who} B's agent`,
        call: () => api(`/agents/${bAgent.id}/invoke`, { token, body: { roomId: aRoomId, prompt: 'hello' } }),
      })),
      'agent_not_found',
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/agents/${aAgent.id}/invoke`, { token, body: { roomId, prompt: 'hello' } }),
        })),
      ),
    );
    const byKey = await api(`/agents/${bAgent.id}/invoke`, { apiKey: a.apiKey, body: { roomId: bAiRoomId } });
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await bHistory()).toEqual(historyBefore);
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
    expect(await bMembers(bAiRoomId)).toEqual(membersBefore);
  },

  async GetRoomHandoff() {
    // Act + Assess
    await expectAllNotFound(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/handoff`, auth) })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
  },

  async StartRoomHandoff() {
    // Prepare
    const claimed = await bTasks('claimed');

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/handoff`, { ...auth, method: 'POST', body: { note: 'a takeover' } }),
        })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
    expect((await api(`/rooms/${bRoomId}/handoff`, { apiKey: b.apiKey })).body).toEqual({ state: 'none' });
    expect(await bTasks('claimed')).toEqual(claimed);
  },

  async CompleteRoomHandoff() {
    // Act + Assess: B's active handoff, and B's rooms without one, do not exist for A
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/handoff`, { ...auth, method: 'PATCH', body: { disposition: 'resolved', note: 'closed by A' } }),
        })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
    expect((await bTasks('claimed')).map((task) => task.taskId)).toContain(bHandoff.agent_task_id);
    expect((await bTasks('resolved')).map((task) => task.taskId)).not.toContain(bHandoff.agent_task_id);
  },

  async ListDispositions() {
    // Act
    const lists = await Promise.all(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) => api('/agent-queue/dispositions', auth)),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.dispositions.map((entry: any) => entry.code)).not.toContain(B_DISPOSITION.code);
      expect(JSON.stringify(list.body)).not.toContain(B_DISPOSITION.label);
    }
    expect(await bDispositions()).toContainEqual({ ...B_DISPOSITION, builtIn: false });
  },

  async SetDispositions() {
    // Prepare
    const before = await bDispositions();

    // Act: A replaces its own codes, B's code among them, and then none
    const sets = await Promise.all(
      aCallers().map(({ auth }) =>
        api('/admin/agent-queue/dispositions', {
          ...auth,
          method: 'PUT',
          body: {
            dispositions: [
              { code: B_DISPOSITION.code, label: 'A label' },
              { code: 'a_only_code', label: 'A only' },
            ],
          },
        }),
      ),
    );
    const cleared = await api('/admin/agent-queue/dispositions', { apiKey: a.apiKey, method: 'PUT', body: { dispositions: [] } });

    // Assess: B's list is as it was
    for (const set of sets) expect(set.status).toBe(200);
    expect(cleared.status).toBe(200);
    expect(await bDispositions()).toEqual(before);
    expect(before).toContainEqual({ ...B_DISPOSITION, builtIn: false });
  },

  async ListAgentTasks() {
    // Act
    const lists = await Promise.all(
      aCallers().flatMap(({ auth }) => ['claimed', 'resolved'].map((status) => api(`/agent-queue/tasks?status=${status}&limit=100`, auth))),
    );

    // Assess: A has no handoffs, so any task listed would be another tenant's
    for (const list of lists) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { tasks: [] } });
    expect((await bTasks('claimed')).map((task) => task.taskId)).toContain(bHandoff.agent_task_id);
  },
};

describe('tenant isolation: project A against project B, route by route', () => {
  it('has a case for every route of the wiring table and no case for a route that does not exist', () => {
    // Assess
    expect(Object.keys(cases).sort()).toEqual(httpRoutes.map((route) => route.id).sort());
  });

  describe.each(httpRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))('$method $path ($id)', ({ id }) => {
    it("does not reach project B's data", async () => {
      const run = cases[id];
      expect(run, `no tenant-isolation case for route ${id}`).toBeDefined();
      await run?.();
    });
  });
});

describe("push between users of one project: a user never reaches another user's targets or pushes", () => {
  /** In B: `x` (B's user of the shared id) holds the things; `y` and B's admin are other users of B. */
  let y: string;
  let bAdmin: string;

  beforeAll(async () => {
    [y, bAdmin] = await Promise.all([b.token(uniqueId('yara')), b.token(uniqueId('b-admin'), ['admin'])]);
  });

  const others = () => [
    { who: 'another member', token: y },
    { who: 'a project admin', token: bAdmin },
  ];

  it("lists only the caller's own devices and subscriptions", async () => {
    // Prepare
    const [device, subscription] = await Promise.all([registerDevice(bMember), subscribe(bMember)]);

    // Act
    const lists = await Promise.all(
      others().flatMap(({ token }) => [api('/push/devices', { token }), api('/push/web/subscriptions', { token })]),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain(device.id);
      expect(JSON.stringify(list.body)).not.toContain(subscription.id);
    }
  });

  it("answers 404 to deleting another user's device or subscription, and leaves them in place", async () => {
    // Prepare
    const endpoint = pushEndpoint();
    const [device, subscription] = await Promise.all([registerDevice(bMember), subscribe(bMember, endpoint)]);

    // Act + Assess
    await expectAllNotFound(
      others().map(({ who, token }) => ({
        label: who,
        call: () => api(`/push/devices/${device.id}`, { token, method: 'DELETE' }),
      })),
      'device_not_found',
    );
    await expectAllNotFound(
      others().flatMap(({ who, token }) =>
        [subscription.id, encodeURIComponent(endpoint)].map((idOrEndpoint) => ({
          label: `${who} ${idOrEndpoint}`,
          call: () => api(`/push/web/subscribe/${idOrEndpoint}`, { token, method: 'DELETE' }),
        })),
      ),
      'subscription_not_found',
    );
    expect(await devicesOf(bMember)).toContainEqual(device);
    expect(await subscriptionsOf(bMember)).toContainEqual(subscription);
  });

  it("answers 404 to acknowledging another user's push, and leaves it unacknowledged", async () => {
    // Prepare
    const pushId = await seedPush(b.projectId, sharedUserId);

    // Act + Assess
    await expectAllNotFound(
      others().map(({ who, token }) => ({ label: who, call: () => api('/push/delivery-ack', { token, body: { pushId } }) })),
      'push_not_found',
    );
    expect(await pushRecordOf(b.projectId, pushId)).toMatchObject({ status: 'sent', userId: sharedUserId });
    expect(await pushRecordOf(b.projectId, pushId)).not.toHaveProperty('deliveredAt');
  });

  it('moves a device token or an endpoint registered again by another user (a handed-on phone), as documented', async () => {
    // Prepare
    const deviceToken = fcmToken();
    const endpoint = pushEndpoint();
    const [device, subscription] = await Promise.all([registerDevice(bMember, deviceToken), subscribe(bMember, endpoint)]);

    // Act
    const [movedDevice, movedSubscription] = await Promise.all([registerDevice(y, deviceToken), subscribe(y, endpoint)]);

    // Assess: the new holder has them (same ids), the previous holder no longer does
    expect(movedDevice.id).toBe(device.id);
    expect(movedSubscription.id).toBe(subscription.id);
    expect((await devicesOf(bMember)).map((d) => d.id)).not.toContain(device.id);
    expect((await subscriptionsOf(bMember)).map((s) => s.id)).not.toContain(subscription.id);
    expect((await devicesOf(y)).map((d) => d.id)).toContain(device.id);
    expect((await subscriptionsOf(y)).map((s) => s.id)).toContain(subscription.id);
  });
});

describe('tenant isolation beyond the HTTP routes', () => {
  it("refuses a WebSocket to B's rooms with A's token (404)", async () => {
    // Act
    const handshakes = await Promise.all(bRooms().map((roomId) => tryConnect(roomId, aMember)));

    // Assess
    for (const handshake of handshakes) expect(handshake).toMatchObject({ open: false, status: 404 });
  });

  it("does not let A's signing secret mint tokens for project B", async () => {
    // Prepare
    const forged = await new SignJWT({ projectId: b.projectId, userId: sharedUserId, roles: ['owner'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(a.signingSecret));

    // Act
    const response = await api(`/rooms/${bRoomId}`, { token: forged });

    // Assess
    expect(response).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
  });

  it("does not accept an API key that names B's project with A's secret", async () => {
    // Prepare
    const aSecret = a.apiKey.slice(`ck_${a.projectId}_`.length);

    // Act
    const response = await api(`/rooms/${bRoomId}`, { apiKey: `ck_${b.projectId}_${aSecret}` });

    // Assess
    expect(response).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
  });
});
