import { createECDH, createHmac, generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { vapidKey } from '#shared/db/push-vapid';
import { type DeliveryItem, deliveriesIndexKey, deliveryKey } from '#shared/db/webhook-delivery';
import { httpRoutes } from '#wiring';
import { agentBody, agentHandle, createAgent, dispositionCode, postThread, setAiQuota } from '../support/ai/fixtures';
import { type ApiOptions, api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { fcmToken, pushEndpoint, seedPushRecord, subscriptionKeys } from '../support/push/fixtures';
import { get, raw, table } from '../support/raw-table';
import { openSse } from '../support/sse';

/**
 * Bad input of every field of every request: wrong types, missing required fields, oversize values,
 * unknown fields on strict bodies, malformed JSON, bad path and query parameters. Each route also
 * has a positive control, so a variant fails for its field and not for anything else.
 */

type Body = Record<string, unknown>;
type Auth = Pick<ApiOptions, 'token' | 'apiKey' | 'headers'>;

let project: TestProject;
/** A second project whose keys the RotateProjectKeys control may rotate. */
let rotatable: TestProject;
let adminToken: string;
let memberToken: string;
let roomId: string;
const memberId = uniqueId('member');
const signInUser = uniqueId('signin');
const SIGN_IN_PASSWORD = 'sign-in-password';
const WEBHOOK_SECRET = 'validation-webhook-secret';
const VERIFY_BODY = '{"type":"message.created"}';
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');
/** The webhook the VerifyWebhook requests check against. */
let verifyWebhookId: string;
/** Registrations for the DeleteWebhook requests to delete, one per request. */
const disposableWebhookIds: string[] = [];
/** A failed delivery for the ReplayWebhookDelivery control (the shared runtime runs no queue consumers, so none arise). */
const failedDeliveryId = `whd_${randomBytes(16).toString('hex')}`;

/** Registrations for the DeletePushDevice requests to delete, one per request (ids of the member's devices). */
const disposableDeviceIds: string[] = [];
/** Subscriptions for the UnsubscribeWebPush requests to remove, one per request (ids of the member's subscriptions). */
const disposableSubscriptionIds: string[] = [];
/** A push sent to the member, for the AcknowledgePushDelivery control; acknowledging it again changes nothing. */
const memberPushId = `push_${randomBytes(16).toString('hex')}`;

/**
 * AI fixtures. The thread summary is rate limited per user (10 a minute, counted before the body is
 * read), so every SummarizeThread request comes from a user of its own (a project admin, who may
 * read the room without being a member); the path parameter, body and unknown-room cases draw from
 * the pools too, so the pools hold a request for each of them and the control.
 */
const summaryTokens: string[] = [];
/** The thread (root and two replies, in `roomId`) the SummarizeThread and SuggestReplies requests name. */
let thread: { rootId: number; replyIds: number[] };
/** The agent the UpdateAgent and InvokeAgent requests act on, and StartRoomHandoff names. */
let agentId: string;
/** Agents for the DeleteAgent requests to delete, one per request. */
const disposableAgentIds: string[] = [];
/** Rooms without a handoff for the StartRoomHandoff requests, and rooms with an active one for CompleteRoomHandoff. */
const handoffFreeRoomIds: string[] = [];
const handoffActiveRoomIds: string[] = [];
const VALIDATION_DISPOSITION = { code: 'validation_code', label: 'Validation' };

/** A fresh FCM registration token (letters, digits and `:`). */
const pem = (key: KeyObject, type: 'pkcs8' | 'pkcs1' | 'sec1') => key.export({ type, format: 'pem' }) as string;
/** Keys for the push configuration: the FCM service account's RSA key, the APNs .p8 key (EC P-256), and wrong kinds. */
const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const p256Key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
const p384Key = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey;
const APNS_PRIVATE_KEY = pem(p256Key, 'pkcs8');
/** The key file of an FCM service account, as a JSON string; `fields` overrides or (with `undefined`) removes fields. */
const serviceAccount = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    client_email: 'push@validation.iam.gserviceaccount.com',
    private_key: pem(rsaKey, 'pkcs8'),
    token_uri: 'https://oauth2.googleapis.com/token',
    ...fields,
  });

const registerWebhook = async (secret?: string) =>
  (
    await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['message.created'], ...(secret ? { secret } : {}) },
    })
  ).body.id as string;

/**
 * Writes a failed delivery straight to the table, as the retry schedule leaves one. Its registration
 * does not exist, so the attempt a replay starts fails at once without sending anything.
 */
async function seedFailedDelivery(projectId: string, deliveryId: string) {
  const now = new Date().toISOString();
  const item: DeliveryItem = {
    ...deliveryKey(projectId, deliveryId),
    gsi1pk: deliveriesIndexKey(projectId),
    gsi1sk: `${now}#${deliveryId}`,
    projectId,
    deliveryId,
    webhookId: `wh_${projectId}_${'0'.repeat(24)}`,
    eventType: 'message.created',
    body: VERIFY_BODY,
    status: 'failed',
    attempt_count: 5,
    next_attempt_at: null,
    last_http_status: 500,
    last_error: 'HTTP 500',
    createdAt: now,
    updatedAt: now,
  };
  await raw.send(new PutCommand({ TableName: table(), Item: item }));
}

const registerDevice = async () =>
  (await api('/push/devices', { token: memberToken, body: { platform: 'fcm', token: fcmToken() } })).body.id as string;
const subscribe = async () =>
  (await api('/push/web/subscribe', { token: memberToken, body: { endpoint: pushEndpoint(), keys: subscriptionKeys() } })).body
    .id as string;

beforeAll(async () => {
  [project, rotatable] = await Promise.all([createTestProject('validation'), createTestProject('rotatable')]);
  [adminToken, memberToken] = await Promise.all([project.token(uniqueId('admin'), ['admin']), project.token(memberId)]);
  roomId = uniqueId('room');
  await api('/rooms', { token: memberToken, body: { id: roomId, type: 'group' } });
  await api(`/users/${signInUser}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: SIGN_IN_PASSWORD } });
  let disposable: string[];
  [verifyWebhookId, disposable] = await Promise.all([
    registerWebhook(WEBHOOK_SECRET),
    Promise.all(Array.from({ length: 3 }, () => registerWebhook())),
    seedFailedDelivery(project.projectId, failedDeliveryId),
  ]);
  disposableWebhookIds.push(...disposable);
  const [devices, subscriptions] = await Promise.all([
    // The path parameter cases draw from the pools too (7 and 2 of them), so a control run again still finds one.
    Promise.all(Array.from({ length: 10 }, registerDevice)),
    Promise.all(Array.from({ length: 5 }, subscribe)),
    seedPushRecord(project.projectId, memberId, memberPushId),
  ]);
  disposableDeviceIds.push(...devices);
  disposableSubscriptionIds.push(...subscriptions);

  const newRoom = async () => {
    const id = uniqueId('ai-room');
    await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group' } });
    return id;
  };
  let tokens: string[];
  let agents: string[];
  let freeRooms: string[];
  let activeRooms: string[];
  [tokens, thread, agentId, agents, freeRooms, activeRooms] = await Promise.all([
    Promise.all(Array.from({ length: 26 }, () => project.token(uniqueId('summarizer'), ['admin']))),
    postThread(project.projectId, { token: memberToken }, roomId),
    createAgent({ apiKey: project.apiKey }).then((agent) => agent.id),
    Promise.all(Array.from({ length: 5 }, () => createAgent({ apiKey: project.apiKey }).then((agent) => agent.id))),
    Promise.all(Array.from({ length: 24 }, newRoom)),
    Promise.all(
      Array.from({ length: 24 }, async () => {
        const id = await newRoom();
        await api(`/rooms/${id}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });
        return id;
      }),
    ),
  ]);
  summaryTokens.push(...tokens);
  disposableAgentIds.push(...agents);
  handoffFreeRoomIds.push(...freeRooms);
  handoffActiveRoomIds.push(...activeRooms);
});

const operator = (): Auth => ({ headers: { 'x-service-operator-key': runtime().operatorKey } });

interface RouteRequest {
  readonly path: () => string;
  readonly auth: () => Auth;
  /** A valid body (fresh on each call), for routes that take one. */
  readonly body?: () => Body;
  /** Status of the valid request. */
  readonly success: number;
}

/** How to make a request each route accepts: every route of the wiring table needs an entry. */
const requests: Record<string, RouteRequest> = {
  GetHealth: { path: () => '/health', auth: () => ({}), success: 200 },
  CreateProject: {
    path: () => '/platform/projects',
    auth: operator,
    body: () => ({ name: 'valid project', projectId: uniqueId('prj') }),
    success: 201,
  },
  RotateProjectKeys: {
    path: () => `/platform/projects/${rotatable.projectId}/rotate-keys`,
    auth: operator,
    body: () => ({ apiKey: false, signingSecret: false }),
    success: 200,
  },
  CreateToken: {
    path: () => '/auth/token',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ userId: 'valid-user', roles: ['member'], expiresIn: 60 }),
    success: 201,
  },
  SignIn: {
    path: () => '/auth/signin',
    auth: () => ({}),
    body: () => ({ projectId: project.projectId, userId: signInUser, password: SIGN_IN_PASSWORD, expiresIn: 60 }),
    success: 200,
  },
  SetUserCredentials: {
    path: () => `/users/${uniqueId('user')}/credentials`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ password: 'long-enough', roles: ['member'] }),
    success: 204,
  },
  CreateRoom: {
    path: () => '/rooms',
    auth: () => ({ token: adminToken }),
    body: () => ({ id: uniqueId('room'), type: 'group', name: 'n', description: 'd', members: ['bob'], e2eEnabled: false }),
    success: 201,
  },
  ListRooms: { path: () => '/rooms', auth: () => ({ token: memberToken }), success: 200 },
  GetRoom: { path: () => `/rooms/${roomId}`, auth: () => ({ token: adminToken }), success: 200 },
  UpdateRoom: {
    path: () => `/rooms/${roomId}`,
    auth: () => ({ token: adminToken }),
    body: () => ({ name: 'n', description: 'd', e2eEnabled: false }),
    success: 200,
  },
  ListRoomMembers: { path: () => `/rooms/${roomId}/members`, auth: () => ({ token: adminToken }), success: 200 },
  AddRoomMember: {
    path: () => `/rooms/${roomId}/members`,
    auth: () => ({ token: adminToken }),
    body: () => ({ userId: uniqueId('added'), role: 'member' }),
    success: 201,
  },
  RemoveRoomMember: { path: () => `/rooms/${roomId}/members/${uniqueId('gone')}`, auth: () => ({ token: adminToken }), success: 204 },
  GetRoomE2eKey: { path: () => `/rooms/${roomId}/e2e-key`, auth: () => ({ token: memberToken }), success: 200 },
  CreateMessage: {
    path: () => '/messages',
    auth: () => ({ token: adminToken }),
    body: () => ({
      roomId,
      content: 'valid',
      parent_id: null,
      attachments: ['https://example.com/a.png'],
      clientMessageId: uniqueId('c'),
      userId: 'someone',
      createdAt: '2022-02-02T02:02:02.000Z',
    }),
    success: 201,
  },
  ListRoomMessages: { path: () => `/rooms/${roomId}/messages`, auth: () => ({ token: adminToken }), success: 200 },
  PostRoomMessage: {
    path: () => `/rooms/${roomId}/messages`,
    auth: () => ({ token: adminToken }),
    body: () => ({
      content: 'valid',
      parent_id: null,
      attachments: ['https://example.com/a.png'],
      clientMessageId: uniqueId('c'),
      userId: 'someone',
      createdAt: '2022-02-02T02:02:02.000Z',
    }),
    success: 201,
  },
  ImportMessage: {
    path: () => '/admin/messages/import',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ roomId, userId: 'legacy', content: 'valid', createdAt: '2021-01-01T00:00:00Z', clientMessageId: uniqueId('c') }),
    success: 201,
  },
  ImportMessageBatch: {
    path: () => '/admin/messages/import/batch',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ messages: [{ roomId, userId: 'legacy', content: 'valid', createdAt: '2021-01-01T00:00:00Z' }] }),
    success: 200,
  },
  GetBlockList: { path: () => '/admin/moderation/blocklist', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ReplaceBlockList: {
    path: () => '/admin/moderation/blocklist',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ terms: ['valid-term'] }),
    success: 200,
  },
  ListModerationFlags: { path: () => '/admin/moderation/flags', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ListWebhookEventTypes: { path: () => '/webhooks/event-types', auth: () => ({}), success: 200 },
  RegisterWebhook: {
    path: () => '/webhooks/register',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ url: 'https://example.com/hook', eventTypes: ['message.created', 'mention'], secret: 'a-valid-secret-of-some-length' }),
    success: 201,
  },
  ListWebhooks: { path: () => '/webhooks', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  DeleteWebhook: {
    path: () => `/webhooks/${disposableWebhookIds.pop() ?? 'wh_none_left'}`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 204,
  },
  VerifyWebhook: {
    path: () => '/webhooks/verify',
    auth: () => ({}),
    body: () => ({ webhookId: verifyWebhookId, body: VERIFY_BODY, signature: sign(WEBHOOK_SECRET, VERIFY_BODY) }),
    success: 200,
  },
  VerifyWebhookSignatures: {
    path: () => '/webhooks/verify-batch',
    auth: () => ({}),
    body: () => ({ secret: WEBHOOK_SECRET, body: VERIFY_BODY, signature: sign(WEBHOOK_SECRET, VERIFY_BODY) }),
    success: 200,
  },
  ListWebhookDeliveries: { path: () => '/admin/webhooks/deliveries', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ReplayWebhookDelivery: {
    path: () => `/admin/webhooks/deliveries/${failedDeliveryId}/replay`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 202,
  },
  StreamRoom: { path: () => `/rooms/${roomId}/stream`, auth: () => ({ token: memberToken }), success: 200 },
  PublishEvents: {
    path: () => '/events',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ roomIds: [roomId], name: 'valid.event:1', data: { k: 1 }, excludeSocketId: 'socket-1' }),
    success: 202,
  },
  PublishUserEvent: {
    path: () => `/users/${memberId}/events`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ name: 'valid_event', data: { k: 1 } }),
    success: 202,
  },
  CloseUserConnections: { path: () => `/users/${uniqueId('user')}/connections`, auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ListWatchlist: { path: () => `/users/${memberId}/watchlist`, auth: () => ({ apiKey: project.apiKey }), success: 200 },
  AddWatchlistTarget: {
    path: () => `/users/${memberId}/watchlist`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ type: 'user', targetId: uniqueId('watched') }),
    success: 201,
  },
  RemoveWatchlistTarget: {
    path: () => `/users/${memberId}/watchlist`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ type: 'user', targetId: uniqueId('watched') }),
    success: 204,
  },
  GetFeatureFlags: { path: () => '/client/feature-flags', auth: () => ({}), success: 200 },
  GetProjectFeatureFlags: { path: () => '/admin/feature-flags', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  SetProjectFeatureFlags: {
    path: () => '/admin/feature-flags',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ overrides: { voice_messages: true, reply_suggestions: true, embed_widget: true, reconnect_backoff_fluxy: false } }),
    success: 200,
  },
  RegisterPushDevice: {
    path: () => '/push/devices',
    auth: () => ({ token: memberToken }),
    body: () => ({ platform: 'fcm', token: fcmToken() }),
    success: 201,
  },
  ListPushDevices: { path: () => '/push/devices', auth: () => ({ token: memberToken }), success: 200 },
  DeletePushDevice: {
    path: () => `/push/devices/${disposableDeviceIds.pop() ?? `pd_noneLeft${'0'.repeat(14)}`}`,
    auth: () => ({ token: memberToken }),
    success: 204,
  },
  PutPushConfig: {
    path: () => '/push/config',
    auth: () => ({ apiKey: project.apiKey }),
    // A fresh environment each call, so the answer is always the 201 of a new one.
    body: () => ({
      environment: uniqueId('env'),
      fcmServerKey: 'AAAA-legacy:server_key.0123',
      fcmProjectId: 'validation-project',
      fcmServiceAccountJson: serviceAccount(),
      apnsBundleId: 'com.example.validation',
      apnsUseSandbox: true,
      apnsKeyId: 'KEY123ABCD',
      apnsTeamId: 'TEAM12345Z',
      apnsPrivateKey: APNS_PRIVATE_KEY,
      webPushEnabled: true,
    }),
    success: 201,
  },
  GetPushConfig: { path: () => '/push/config', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  GetVapidPublicKey: { path: () => `/push/web/vapid-public-key?projectId=${project.projectId}`, auth: () => ({}), success: 200 },
  SubscribeWebPush: {
    path: () => '/push/web/subscribe',
    auth: () => ({ token: memberToken }),
    body: () => ({ endpoint: pushEndpoint(), keys: subscriptionKeys(), userAgent: 'Mozilla/5.0 (validation)' }),
    success: 201,
  },
  UnsubscribeWebPush: {
    path: () => `/push/web/subscribe/${disposableSubscriptionIds.pop() ?? `ws_noneLeft${'0'.repeat(14)}`}`,
    auth: () => ({ token: memberToken }),
    success: 204,
  },
  ListWebPushSubscriptions: { path: () => '/push/web/subscriptions', auth: () => ({ token: memberToken }), success: 200 },
  AcknowledgePushDelivery: {
    path: () => '/push/delivery-ack',
    auth: () => ({ token: memberToken }),
    body: () => ({ pushId: memberPushId }),
    success: 200,
  },
  SummarizeThread: {
    path: () => `/messages/${thread.rootId}/summary`,
    auth: () => ({ token: summaryTokens.pop() ?? adminToken }),
    body: () => ({ roomId }),
    success: 200,
  },
  SuggestReplies: {
    path: () => '/messages/suggest-replies',
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, messageId: thread.rootId }),
    success: 200,
  },
  ListRoomSummaries: { path: () => `/rooms/${roomId}/summaries?limit=5`, auth: () => ({ token: memberToken }), success: 200 },
  GetAiUsage: { path: () => '/admin/ai/usage', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  SetProjectAiQuota: {
    // `null` leaves the project on the default quota, so the control changes nothing.
    path: () => `/platform/projects/${rotatable.projectId}/ai-quota`,
    auth: operator,
    body: () => ({ monthlyInvocations: null }),
    success: 200,
  },
  CreateAgent: {
    path: () => '/agents',
    auth: () => ({ token: adminToken }),
    body: () => agentBody({ model: 'validation-model' }),
    success: 201,
  },
  ListAgents: { path: () => '/agents', auth: () => ({ token: memberToken }), success: 200 },
  UpdateAgent: {
    path: () => `/agents/${agentId}`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ name: 'Validation agent', instructions: 'Answer in one short sentence.', model: 'validation-model' }),
    success: 200,
  },
  DeleteAgent: {
    path: () => `/agents/${disposableAgentIds.pop() ?? 'agt_noneLeft'}`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 204,
  },
  InvokeAgent: {
    path: () => `/agents/${agentId}/invoke`,
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, prompt: 'Say hello' }),
    success: 201,
  },
  GetRoomHandoff: { path: () => `/rooms/${roomId}/handoff`, auth: () => ({ token: memberToken }), success: 200 },
  StartRoomHandoff: {
    path: () => `/rooms/${handoffFreeRoomIds.pop() ?? uniqueId('none-left')}/handoff`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ agentId, note: 'customer asks for a refund' }),
    success: 201,
  },
  CompleteRoomHandoff: {
    path: () => `/rooms/${handoffActiveRoomIds.pop() ?? uniqueId('none-left')}/handoff`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ disposition: 'resolved', note: 'refund granted' }),
    success: 200,
  },
  ListDispositions: { path: () => '/agent-queue/dispositions', auth: () => ({ token: memberToken }), success: 200 },
  SetDispositions: {
    path: () => '/admin/agent-queue/dispositions',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ dispositions: [VALIDATION_DISPOSITION] }),
    success: 200,
  },
  ListAgentTasks: { path: () => '/agent-queue/tasks?status=resolved&limit=10', auth: () => ({ apiKey: project.apiKey }), success: 200 },
};

const routeById = new Map(httpRoutes.map((route) => [route.id, route]));

/** A streaming route's answer: the refusal's JSON, or the status of a stream that opened (closed at once). */
async function openStream(path: string, auth: Auth) {
  const stream = await openSse(path, {
    token: auth.token,
    headers: { ...auth.headers, ...(auth.apiKey ? { 'x-service-api-key': auth.apiKey } : {}) },
  });
  stream.close();
  return { status: stream.status, body: stream.body, headers: stream.headers };
}

const send = (id: string, options: { path?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) => {
  const route = routeById.get(id);
  const request = requests[id];
  if (!route || !request) throw new Error(`no request for route ${id}`);
  const auth = { ...request.auth(), ...(options.headers ? { headers: { ...request.auth().headers, ...options.headers } } : {}) };
  if (route.transport === 'functionUrl') return openStream(options.path ?? request.path(), auth);
  return api(options.path ?? request.path(), { method: route.method, ...auth, body: options.body, rawBody: options.rawBody });
};

const expectInvalid = (response: { status: number; body: any }, field: string) => {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
  expect(response.body.error.details, JSON.stringify(response.body.error.details)).toContainEqual(expect.objectContaining({ field }));
};

describe('every route', () => {
  it('has a request in this file', () => {
    // Assess
    expect(Object.keys(requests).sort()).toEqual(httpRoutes.map((route) => route.id).sort());
  });

  describe.each(httpRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))('$method $path ($id)', ({ id }) => {
    it('accepts the valid request (control for the variants below)', async () => {
      // Act
      const response = await send(id, { body: requests[id]?.body?.() });

      // Assess
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: requests[id]?.success, error: undefined });
    });
  });
});

const bodyRoutes = httpRoutes.filter((route) => requests[route.id]?.body);

describe.each(bodyRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
  '$method $path ($id) body',
  ({ id }) => {
    it('answers 400 invalid_json to malformed JSON', async () => {
      // Act
      const response = await send(id, { rawBody: '{"content": "unterminated' });

      // Assess
      expect(response).toMatchObject({ status: 400, body: { error: { code: 'invalid_json' } } });
    });

    it.each(['null', '[]', '"text"', '42'])('answers 400 validation_failed to the JSON value %s', async (rawBody) => {
      // Act
      const response = await send(id, { rawBody });

      // Assess
      expectInvalid(response, 'body');
    });

    it('answers 413 payload_too_large to a body over 1 MiB', async () => {
      // Act
      const response = await send(id, { rawBody: JSON.stringify({ content: 'x'.repeat(1024 * 1024) }) });

      // Assess
      expect(response).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    });

    it('answers 400 naming the unknown field on the strict body', async () => {
      // Act
      const response = await send(id, { body: { ...requests[id]?.body?.(), bogusField: 1 } });

      // Assess
      expectInvalid(response, 'body');
      expect(response.body.error.details.map((d: any) => d.message).join(' ')).toContain('bogusField');
    });
  },
);

/** Routes whose whole body is optional: RotateProjectKeys (rotates both), StartRoomHandoff (no agent, no note). */
const optionalBodyRoutes = ['RotateProjectKeys', 'StartRoomHandoff'];

describe('a request without a body', () => {
  it.each(bodyRoutes.filter((route) => !optionalBodyRoutes.includes(route.id)).map((route) => route.id))(
    '%s answers 400 validation_failed',
    async (id) => {
      // Act
      const response = await send(id);

      // Assess
      expectInvalid(response, 'body');
    },
  );
});

const set = (key: string, value: unknown) => (body: Body) => ({ ...body, [key]: value });
const drop = (key: string) => (body: Body) => Object.fromEntries(Object.entries(body).filter(([name]) => name !== key));
const long = (length: number) => 'a'.repeat(length);
const future = () => new Date(Date.now() + 24 * 3600_000).toISOString();

/** Field variants: [label, change to the valid body, field named in the error]. */
const idVariants = (key: string, required: boolean): [string, (body: Body) => Body, string][] => [
  ...(required ? [[`${key} missing`, drop(key), `body.${key}`] as [string, (body: Body) => Body, string]] : []),
  [`${key} a number`, set(key, 42), `body.${key}`],
  [`${key} null`, set(key, null), `body.${key}`],
  [`${key} empty`, set(key, ''), `body.${key}`],
  [`${key} of 129 characters`, set(key, long(129)), `body.${key}`],
  [`${key} with a space`, set(key, 'a b'), `body.${key}`],
  [`${key} with #`, set(key, 'a#b'), `body.${key}`],
];

const messageVariants = (withRoom: boolean): [string, (body: Body) => Body, string][] => [
  ...(withRoom ? idVariants('roomId', true) : []),
  ['content missing', drop('content'), 'body.content'],
  ['content a number', set('content', 42), 'body.content'],
  ['content null', set('content', null), 'body.content'],
  ['content empty', set('content', ''), 'body.content'],
  ['content of 4001 characters', set('content', long(4001)), 'body.content'],
  ['parent_id a string', set('parent_id', '1'), 'body.parent_id'],
  ['parent_id zero', set('parent_id', 0), 'body.parent_id'],
  ['parent_id negative', set('parent_id', -1), 'body.parent_id'],
  ['parent_id fractional', set('parent_id', 1.5), 'body.parent_id'],
  ['attachments a string', set('attachments', 'https://example.com/a.png'), 'body.attachments'],
  ['attachments with a number', set('attachments', [42]), 'body.attachments.0'],
  ['attachments with an ftp URL', set('attachments', ['https://example.com/ok', 'ftp://x']), 'body.attachments.1'],
  ['attachments with a javascript: URL', set('attachments', ['javascript:alert(1)']), 'body.attachments.0'],
  ['attachments with a URL of 2049 characters', set('attachments', [`https://e.com/${long(2035)}`]), 'body.attachments.0'],
  [
    '11 attachments',
    set(
      'attachments',
      Array.from({ length: 11 }, (_, i) => `https://e.com/${i}`),
    ),
    'body.attachments',
  ],
  ['clientMessageId a number', set('clientMessageId', 7), 'body.clientMessageId'],
  ['clientMessageId empty', set('clientMessageId', ''), 'body.clientMessageId'],
  ['clientMessageId of 129 characters', set('clientMessageId', long(129)), 'body.clientMessageId'],
  ['userId a number', set('userId', 42), 'body.userId'],
  ['userId with a space', set('userId', 'a b'), 'body.userId'],
  ['userId of 129 characters', set('userId', long(129)), 'body.userId'],
  ['createdAt a number', set('createdAt', 1_700_000_000_000), 'body.createdAt'],
  ['createdAt not a timestamp', set('createdAt', 'last tuesday'), 'body.createdAt'],
  ['createdAt before 2000', set('createdAt', '1999-12-31T23:59:59Z'), 'body.createdAt'],
  ['createdAt in the future', (body) => ({ ...body, createdAt: future() }), 'body.createdAt'],
];

/** The batch form of VerifyWebhookSignatures: `events` instead of `body`. */
const toEvents =
  (events: unknown) =>
  ({ body: _body, ...rest }: Body): Body => ({ ...rest, events });

/** Event names: 1-64 of [A-Za-z0-9_.:-], never client-; data: a JSON object of at most 10 KB. */
const eventVariants = (): [string, (body: Body) => Body, string][] => [
  ['name missing', drop('name'), 'body.name'],
  ['name a number', set('name', 42), 'body.name'],
  ['name empty', set('name', ''), 'body.name'],
  ['name of 65 characters', set('name', long(65)), 'body.name'],
  ['name with a space', set('name', 'a b'), 'body.name'],
  ['name with a slash', set('name', 'a/b'), 'body.name'],
  ['name starting with client-', set('name', 'client-typing'), 'body.name'],
  ['data an array', set('data', [1]), 'body.data'],
  ['data a string', set('data', 'text'), 'body.data'],
  ['data null', set('data', null), 'body.data'],
  ['data over 10 KB', set('data', { blob: long(10 * 1024) }), 'body.data'],
];

const watchTargetVariants = (): [string, (body: Body) => Body, string][] => [
  ['type missing', drop('type'), 'body.type'],
  ['type unknown', set('type', 'channel'), 'body.type'],
  ['type a number', set('type', 1), 'body.type'],
  ...idVariants('targetId', true),
];

/** Text-field variants: [label, change, field] for `key` holding a wrong type, `null` (when not allowed), an empty or oversize value. */
const textVariants = (
  key: string,
  options: { required?: boolean; nullable?: boolean; max?: number } = {},
): [string, (body: Body) => Body, string][] => [
  ...(options.required ? [[`${key} missing`, drop(key), `body.${key}`] as [string, (body: Body) => Body, string]] : []),
  [`${key} a number`, set(key, 42), `body.${key}`],
  [`${key} an object`, set(key, { value: 'x' }), `body.${key}`],
  ...(options.nullable ? [] : [[`${key} null`, set(key, null), `body.${key}`] as [string, (body: Body) => Body, string]]),
  [`${key} empty`, set(key, ''), `body.${key}`],
  ...(options.max === undefined
    ? []
    : [
        [`${key} of ${options.max + 1} characters`, set(key, long(options.max + 1)), `body.${key}`] as [
          string,
          (body: Body) => Body,
          string,
        ],
      ]),
];

/** Device tokens: fcm and android 16-4096 of [A-Za-z0-9_:.-], apns and ios 64-200 hex digits. */
const deviceVariants = (): [string, (body: Body) => Body, string][] => [
  ['platform missing', drop('platform'), 'body.platform'],
  ['platform unknown', set('platform', 'windows'), 'body.platform'],
  ['platform in upper case', set('platform', 'FCM'), 'body.platform'],
  ['platform a number', set('platform', 1), 'body.platform'],
  ['platform null', set('platform', null), 'body.platform'],
  ...textVariants('token', { required: true, max: 4096 }),
  ['an fcm token of 15 characters', set('token', long(15)), 'body.token'],
  ['an fcm token with a space', set('token', 'fcm token with spaces'), 'body.token'],
  ['an fcm token with a slash', set('token', 'fcm/token/with/slashes'), 'body.token'],
  ['an android token with #', () => ({ platform: 'android', token: 'android#token#0123456789' }), 'body.token'],
  ['an apns token that is not hex', () => ({ platform: 'apns', token: 'g'.repeat(64) }), 'body.token'],
  ['an apns token of 63 hex digits', () => ({ platform: 'apns', token: 'a'.repeat(63) }), 'body.token'],
  ['an apns token of 201 hex digits', () => ({ platform: 'apns', token: 'a'.repeat(201) }), 'body.token'],
  ['an ios token that is an fcm token', () => ({ platform: 'ios', token: fcmToken() }), 'body.token'],
];

const setKey = (key: string, value: unknown) => (body: Body) => ({ ...body, keys: { ...(body.keys as Body), [key]: value } });
const dropKey = (key: string) => (body: Body) => ({ ...body, keys: drop(key)(body.keys as Body) });
const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** Subscriptions: an absolute https endpoint of at most 2048 characters, a P-256 point and a 16-byte auth secret. */
const subscriptionVariants = (): [string, (body: Body) => Body, string][] => [
  ...textVariants('endpoint', { required: true }),
  ['endpoint of 2049 characters', set('endpoint', `https://push.example.com/${long(2024)}`), 'body.endpoint'],
  ['endpoint not an absolute URL', set('endpoint', 'push.example.com/sub/1'), 'body.endpoint'],
  ['endpoint with a space', set('endpoint', 'https://push.example.com/sub 1'), 'body.endpoint'],
  ['endpoint with credentials', set('endpoint', 'https://user:secret@push.example.com/sub/1'), 'body.endpoint'],
  ['keys missing', drop('keys'), 'body.keys'],
  ['keys a string', set('keys', 'p256dh'), 'body.keys'],
  ['keys null', set('keys', null), 'body.keys'],
  ['keys with an unknown field', setKey('extra', 'x'), 'body.keys'],
  ['p256dh missing', dropKey('p256dh'), 'body.keys.p256dh'],
  ['p256dh a number', setKey('p256dh', 65), 'body.keys.p256dh'],
  ['p256dh null', setKey('p256dh', null), 'body.keys.p256dh'],
  ['p256dh empty', setKey('p256dh', ''), 'body.keys.p256dh'],
  ['p256dh not base64url', setKey('p256dh', `${'A'.repeat(85)}+/`), 'body.keys.p256dh'],
  ['p256dh of 64 bytes', setKey('p256dh', base64url(Buffer.concat([Buffer.from([4]), randomBytes(63)]))), 'body.keys.p256dh'],
  ['p256dh of 66 bytes', setKey('p256dh', base64url(Buffer.concat([Buffer.from([4]), randomBytes(65)]))), 'body.keys.p256dh'],
  ['p256dh without 0x04 first', setKey('p256dh', base64url(Buffer.concat([Buffer.from([2]), randomBytes(64)]))), 'body.keys.p256dh'],
  ['auth missing', dropKey('auth'), 'body.keys.auth'],
  ['auth a number', setKey('auth', 16), 'body.keys.auth'],
  ['auth null', setKey('auth', null), 'body.keys.auth'],
  ['auth empty', setKey('auth', ''), 'body.keys.auth'],
  ['auth not base64url', setKey('auth', 'not base64 at all!'), 'body.keys.auth'],
  ['auth of 15 bytes', setKey('auth', base64url(randomBytes(15))), 'body.keys.auth'],
  ['auth of 17 bytes', setKey('auth', base64url(randomBytes(17))), 'body.keys.auth'],
  ['userAgent a number', set('userAgent', 5), 'body.userAgent'],
  ['userAgent null', set('userAgent', null), 'body.userAgent'],
  ['userAgent of 513 characters', set('userAgent', long(513)), 'body.userAgent'],
];

/** APNs key and team ids: exactly 10 of [A-Z0-9]. */
const appleIdVariants = (key: string): [string, (body: Body) => Body, string][] => [
  ...textVariants(key, { nullable: true }),
  [`${key} in lower case`, set(key, 'abcde12345'), `body.${key}`],
  [`${key} of 9 characters`, set(key, 'ABCDE1234'), `body.${key}`],
  [`${key} of 11 characters`, set(key, 'ABCDE123456'), `body.${key}`],
  [`${key} with a dash`, set(key, 'ABCDE-1234'), `body.${key}`],
];

/**
 * The push configuration: every key field may be `null` (it clears), so only wrong types and
 * values are refused; the service account and the APNs key are also checked as keys.
 */
const pushConfigVariants = (): [string, (body: Body) => Body, string][] => [
  ...textVariants('environment'),
  ['environment of 65 characters', set('environment', long(65)), 'body.environment'],
  ['environment with a space', set('environment', 'pre prod'), 'body.environment'],
  ['environment with a slash', set('environment', 'prod/eu'), 'body.environment'],
  ['environment with #', set('environment', 'prod#1'), 'body.environment'],
  ...textVariants('fcmServerKey', { nullable: true, max: 4096 }),
  ['fcmServerKey with a space', set('fcmServerKey', 'two keys'), 'body.fcmServerKey'],
  ...textVariants('fcmProjectId', { nullable: true }),
  ['fcmProjectId in upper case', set('fcmProjectId', 'My-Project'), 'body.fcmProjectId'],
  ['fcmProjectId of 5 characters', set('fcmProjectId', 'abcde'), 'body.fcmProjectId'],
  ['fcmProjectId of 64 characters', set('fcmProjectId', long(64)), 'body.fcmProjectId'],
  ['fcmProjectId starting with a digit', set('fcmProjectId', '1-project'), 'body.fcmProjectId'],
  ['fcmProjectId ending with a dash', set('fcmProjectId', 'project-'), 'body.fcmProjectId'],
  ['fcmProjectId with an underscore', set('fcmProjectId', 'my_project'), 'body.fcmProjectId'],
  ...textVariants('fcmServiceAccountJson', { nullable: true, max: 16_384 }),
  ['fcmServiceAccountJson not JSON', set('fcmServiceAccountJson', '{"client_email": '), 'body.fcmServiceAccountJson'],
  ['fcmServiceAccountJson a JSON array', set('fcmServiceAccountJson', '[]'), 'body.fcmServiceAccountJson'],
  [
    'fcmServiceAccountJson without client_email',
    set('fcmServiceAccountJson', serviceAccount({ client_email: undefined })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson without private_key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: undefined })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a private_key that is no PEM',
    set('fcmServiceAccountJson', serviceAccount({ private_key: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a PKCS#1 RSA key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: pem(rsaKey, 'pkcs1') })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with an EC key',
    set('fcmServiceAccountJson', serviceAccount({ private_key: APNS_PRIVATE_KEY })),
    'body.fcmServiceAccountJson',
  ],
  [
    'fcmServiceAccountJson with a token_uri that is a number',
    set('fcmServiceAccountJson', serviceAccount({ token_uri: 443 })),
    'body.fcmServiceAccountJson',
  ],
  ...textVariants('apnsBundleId', { nullable: true }),
  ['apnsBundleId with a space', set('apnsBundleId', 'com.example app'), 'body.apnsBundleId'],
  ['apnsBundleId with a slash', set('apnsBundleId', 'com/example/app'), 'body.apnsBundleId'],
  ['apnsBundleId of 156 characters', set('apnsBundleId', long(156)), 'body.apnsBundleId'],
  ['apnsUseSandbox a string', set('apnsUseSandbox', 'true'), 'body.apnsUseSandbox'],
  ['apnsUseSandbox a number', set('apnsUseSandbox', 1), 'body.apnsUseSandbox'],
  ['apnsUseSandbox null', set('apnsUseSandbox', null), 'body.apnsUseSandbox'],
  ...appleIdVariants('apnsKeyId'),
  ...appleIdVariants('apnsTeamId'),
  ...textVariants('apnsPrivateKey', { nullable: true, max: 4096 }),
  ['apnsPrivateKey not a PEM key', set('apnsPrivateKey', 'not a key'), 'body.apnsPrivateKey'],
  ['apnsPrivateKey an RSA key', set('apnsPrivateKey', pem(rsaKey, 'pkcs8')), 'body.apnsPrivateKey'],
  ['apnsPrivateKey an EC P-384 key', set('apnsPrivateKey', pem(p384Key, 'pkcs8')), 'body.apnsPrivateKey'],
  ['apnsPrivateKey a SEC1 EC key', set('apnsPrivateKey', pem(p256Key, 'sec1')), 'body.apnsPrivateKey'],
  ['webPushEnabled a string', set('webPushEnabled', 'yes'), 'body.webPushEnabled'],
  ['webPushEnabled a number', set('webPushEnabled', 0), 'body.webPushEnabled'],
  ['webPushEnabled null', set('webPushEnabled', null), 'body.webPushEnabled'],
];

/** Agent text fields are trimmed before their bounds are checked, so a blank one is empty. */
const agentTextVariants = (key: string, options: { required?: boolean; nullable?: boolean; max: number }) => [
  ...textVariants(key, options),
  [`${key} blank`, set(key, '   '), `body.${key}`] as [string, (body: Body) => Body, string],
];

/** Agent handles: 2-32 of [a-z0-9-], starting with a letter; optional (derived from the name when absent). */
const handleVariants = (): [string, (body: Body) => Body, string][] => [
  ...textVariants('handle'),
  ['handle of one character', set('handle', 'a'), 'body.handle'],
  ['handle of 33 characters', set('handle', long(33)), 'body.handle'],
  ['handle in upper case', set('handle', 'Support'), 'body.handle'],
  ['handle starting with a digit', set('handle', '1support'), 'body.handle'],
  ['handle starting with a dash', set('handle', '-support'), 'body.handle'],
  ['handle with an underscore', set('handle', 'release_bot'), 'body.handle'],
  ['handle with a space', set('handle', 'release bot'), 'body.handle'],
  ['handle with agent: in front', set('handle', 'agent:support'), 'body.handle'],
];

/** A note of a handoff or its completion: any string of at most 2000 characters. */
const noteVariants = (): [string, (body: Body) => Body, string][] => [
  ['note a number', set('note', 42), 'body.note'],
  ['note null', set('note', null), 'body.note'],
  ['note an object', set('note', { text: 'x' }), 'body.note'],
  ['note of 2001 characters', set('note', long(2001)), 'body.note'],
];

/** Changes to the first disposition entry of a SetDispositions body. */
const setEntry = (key: string, value: unknown) => (body: Body) => ({
  dispositions: [{ ...(body.dispositions as Body[])[0], [key]: value }],
});
const dropEntry = (key: string) => (body: Body) => ({ dispositions: [drop(key)((body.dispositions as Body[])[0] as Body)] });

const dispositionVariants = (): [string, (body: Body) => Body, string][] => [
  ['dispositions missing', drop('dispositions'), 'body.dispositions'],
  ['dispositions a string', set('dispositions', 'resolved'), 'body.dispositions'],
  ['dispositions null', set('dispositions', null), 'body.dispositions'],
  ['dispositions an object', set('dispositions', VALIDATION_DISPOSITION), 'body.dispositions'],
  [
    'dispositions with 51 entries',
    set(
      'dispositions',
      Array.from({ length: 51 }, (_, i) => ({ code: `code_${i}`, label: `Code ${i}` })),
    ),
    'body.dispositions',
  ],
  ['an entry that is a string', set('dispositions', ['validation_code']), 'body.dispositions.0'],
  ['an entry with an unknown field', setEntry('color', 'red'), 'body.dispositions.0'],
  ['code missing', dropEntry('code'), 'body.dispositions.0.code'],
  ['code a number', setEntry('code', 42), 'body.dispositions.0.code'],
  ['code null', setEntry('code', null), 'body.dispositions.0.code'],
  ['code empty', setEntry('code', ''), 'body.dispositions.0.code'],
  ['code of one character', setEntry('code', 'a'), 'body.dispositions.0.code'],
  ['code of 41 characters', setEntry('code', long(41)), 'body.dispositions.0.code'],
  ['code in upper case', setEntry('code', 'Refunded'), 'body.dispositions.0.code'],
  ['code starting with a digit', setEntry('code', '1st_contact'), 'body.dispositions.0.code'],
  ['code with a dash', setEntry('code', 'follow-up'), 'body.dispositions.0.code'],
  ['code a default one', setEntry('code', 'resolved'), 'body.dispositions.0.code'],
  [
    'code listed twice',
    (body) => ({ dispositions: [...(body.dispositions as Body[]), { code: VALIDATION_DISPOSITION.code, label: 'Again' }] }),
    'body.dispositions.1.code',
  ],
  ['label missing', dropEntry('label'), 'body.dispositions.0.label'],
  ['label a number', setEntry('label', 42), 'body.dispositions.0.label'],
  ['label null', setEntry('label', null), 'body.dispositions.0.label'],
  ['label empty', setEntry('label', ''), 'body.dispositions.0.label'],
  ['label blank', setEntry('label', '   '), 'body.dispositions.0.label'],
  ['label of 81 characters', setEntry('label', long(81)), 'body.dispositions.0.label'],
];

const fieldVariants: Record<string, [string, (body: Body) => Body, string][]> = {
  PublishEvents: [
    ['roomIds missing', drop('roomIds'), 'body.roomIds'],
    ['roomIds a string', set('roomIds', 'room'), 'body.roomIds'],
    ['roomIds empty', set('roomIds', []), 'body.roomIds'],
    [
      'roomIds with 11 entries',
      set(
        'roomIds',
        Array.from({ length: 11 }, (_, i) => `r${i}`),
      ),
      'body.roomIds',
    ],
    ['roomIds with a number', set('roomIds', ['ok', 42]), 'body.roomIds.1'],
    ['roomIds with a bad id', set('roomIds', ['a#b']), 'body.roomIds.0'],
    ['roomIds with an id of 129 characters', set('roomIds', [long(129)]), 'body.roomIds.0'],
    ...eventVariants(),
    ['excludeSocketId a number', set('excludeSocketId', 7), 'body.excludeSocketId'],
    ['excludeSocketId empty', set('excludeSocketId', ''), 'body.excludeSocketId'],
    ['excludeSocketId of 129 characters', set('excludeSocketId', long(129)), 'body.excludeSocketId'],
    ['socket_id a number', set('socket_id', 7), 'body.socket_id'],
    ['socket_id empty', set('socket_id', ''), 'body.socket_id'],
  ],
  PublishUserEvent: eventVariants(),
  AddWatchlistTarget: watchTargetVariants(),
  RemoveWatchlistTarget: watchTargetVariants(),
  SetProjectFeatureFlags: [
    ['overrides missing', drop('overrides'), 'body.overrides'],
    ['overrides an array', set('overrides', []), 'body.overrides'],
    ['overrides null', set('overrides', null), 'body.overrides'],
    ['overrides with an unknown flag', set('overrides', { dark_mode: true }), 'body.overrides'],
    ['overrides with a string value', set('overrides', { voice_messages: 'yes' }), 'body.overrides.voice_messages'],
    ['overrides with a null value', set('overrides', { embed_widget: null }), 'body.overrides.embed_widget'],
  ],
  CreateProject: [
    ['name missing', drop('name'), 'body.name'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name blank', set('name', '   '), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['projectId a number', set('projectId', 42), 'body.projectId'],
    ['projectId with upper case', set('projectId', 'Upper-Case'), 'body.projectId'],
    ['projectId with an underscore', set('projectId', 'under_score'), 'body.projectId'],
    ['projectId of one character', set('projectId', 'a'), 'body.projectId'],
    ['projectId of 64 characters', set('projectId', long(64)), 'body.projectId'],
    ['projectId starting with a dash', set('projectId', '-dash'), 'body.projectId'],
  ],
  RotateProjectKeys: [
    ['apiKey a string', set('apiKey', 'yes'), 'body.apiKey'],
    ['apiKey null', set('apiKey', null), 'body.apiKey'],
    ['signingSecret a number', set('signingSecret', 1), 'body.signingSecret'],
  ],
  CreateToken: [
    ...idVariants('userId', true),
    ['roles a string', set('roles', 'admin'), 'body.roles'],
    ['roles with an unknown role', set('roles', ['member', 'superuser']), 'body.roles.1'],
    ['roles empty', set('roles', []), 'body.roles'],
    ['roles with 6 entries', set('roles', ['guest', 'member', 'moderator', 'admin', 'owner', 'owner']), 'body.roles'],
    ['expiresIn a string', set('expiresIn', '60'), 'body.expiresIn'],
    ['expiresIn zero', set('expiresIn', 0), 'body.expiresIn'],
    ['expiresIn negative', set('expiresIn', -60), 'body.expiresIn'],
    ['expiresIn fractional', set('expiresIn', 1.5), 'body.expiresIn'],
    ['expiresIn over a day', set('expiresIn', 86_401), 'body.expiresIn'],
  ],
  SignIn: [
    ['projectId missing', drop('projectId'), 'body.projectId'],
    ['projectId a number', set('projectId', 42), 'body.projectId'],
    ['projectId not a project id', set('projectId', 'Not A Project'), 'body.projectId'],
    ...idVariants('userId', true),
    ['password missing', drop('password'), 'body.password'],
    ['password a number', set('password', 12345678), 'body.password'],
    ['password empty', set('password', ''), 'body.password'],
    ['password of 1025 characters', set('password', long(1025)), 'body.password'],
    ['expiresIn a string', set('expiresIn', '60'), 'body.expiresIn'],
    ['expiresIn zero', set('expiresIn', 0), 'body.expiresIn'],
  ],
  SetUserCredentials: [
    ['password missing', drop('password'), 'body.password'],
    ['password a number', set('password', 123456789), 'body.password'],
    ['password of 7 characters', set('password', 'short77'), 'body.password'],
    ['password of 1025 characters', set('password', long(1025)), 'body.password'],
    ['roles a string', set('roles', 'member'), 'body.roles'],
    ['roles with an unknown role', set('roles', ['root']), 'body.roles.0'],
  ],
  CreateRoom: [
    ...idVariants('id', false).filter(([label]) => label !== 'id null'),
    ['type missing', drop('type'), 'body.type'],
    ['type unknown', set('type', 'private'), 'body.type'],
    ['type a number', set('type', 1), 'body.type'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name blank', set('name', '  '), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['description a number', set('description', 42), 'body.description'],
    ['description of 2001 characters', set('description', long(2001)), 'body.description'],
    ['members a string', set('members', 'bob'), 'body.members'],
    ['members with a number', set('members', ['bob', 42]), 'body.members.1'],
    ['members with a bad id', set('members', ['bob', 'a#b']), 'body.members.1'],
    [
      'members with 101 entries',
      set(
        'members',
        Array.from({ length: 101 }, (_, i) => `m${i}`),
      ),
      'body.members',
    ],
    ['e2eEnabled a string', set('e2eEnabled', 'yes'), 'body.e2eEnabled'],
  ],
  UpdateRoom: [
    ['no field at all', () => ({}), 'body'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['description a number', set('description', 42), 'body.description'],
    ['description of 2001 characters', set('description', long(2001)), 'body.description'],
    ['e2eEnabled a string', set('e2eEnabled', 'true'), 'body.e2eEnabled'],
    ['e2eEnabled null', set('e2eEnabled', null), 'body.e2eEnabled'],
  ],
  AddRoomMember: [
    ...idVariants('userId', true),
    ['role owner', set('role', 'owner'), 'body.role'],
    ['role admin', set('role', 'admin'), 'body.role'],
    ['role a number', set('role', 1), 'body.role'],
  ],
  CreateMessage: messageVariants(true),
  PostRoomMessage: [...messageVariants(false), ['roomId in the body', set('roomId', 'elsewhere'), 'body']],
  ImportMessage: [...messageVariants(true).filter(([label]) => label !== 'userId a number'), ...idVariants('userId', true)],
  ImportMessageBatch: [
    ['messages missing', drop('messages'), 'body.messages'],
    ['messages an object', set('messages', { roomId: 'r' }), 'body.messages'],
    ['messages empty', set('messages', []), 'body.messages'],
    ['messages with 101 rows', (body) => ({ messages: Array.from({ length: 101 }, () => (body.messages as Body[])[0]) }), 'body.messages'],
    ['a row that is a string', set('messages', ['row']), 'body.messages.0'],
    ...messageVariants(true).map(([label, change, field]): [string, (body: Body) => Body, string] => [
      `a row with ${label}`,
      (body) => ({ messages: [(body.messages as Body[])[0], change((body.messages as Body[])[0] as Body)] }),
      field.replace(/^body/, 'body.messages.1'),
    ]),
    ['a row without userId', (body) => ({ messages: [drop('userId')((body.messages as Body[])[0] as Body)] }), 'body.messages.0.userId'],
    ['a row with an unknown field', (body) => ({ messages: [{ ...(body.messages as Body[])[0], extra: 1 }] }), 'body.messages.0'],
  ],
  ReplaceBlockList: [
    ['terms missing', drop('terms'), 'body.terms'],
    ['terms a string', set('terms', 'spam'), 'body.terms'],
    ['terms with a number', set('terms', [1]), 'body.terms.0'],
    ['terms with an empty term', set('terms', ['']), 'body.terms.0'],
    ['terms with a term of 201 characters', set('terms', [long(201)]), 'body.terms.0'],
    [
      'terms with 1001 entries',
      set(
        'terms',
        Array.from({ length: 1001 }, (_, i) => `t${i}`),
      ),
      'body.terms',
    ],
  ],
  RegisterWebhook: [
    ['url missing', drop('url'), 'body.url'],
    ['url a number', set('url', 42), 'body.url'],
    ['url null', set('url', null), 'body.url'],
    ['url empty', set('url', ''), 'body.url'],
    ['url of 2049 characters', set('url', `https://e.com/${long(2035)}`), 'body.url'],
    ['eventTypes missing', drop('eventTypes'), 'body.eventTypes'],
    ['eventTypes a string', set('eventTypes', 'message.created'), 'body.eventTypes'],
    ['eventTypes empty', set('eventTypes', []), 'body.eventTypes'],
    [
      'eventTypes with 51 entries',
      set(
        'eventTypes',
        Array.from({ length: 51 }, () => 'message.created'),
      ),
      'body.eventTypes',
    ],
    ['eventTypes with a number', set('eventTypes', ['mention', 42]), 'body.eventTypes.1'],
    ['eventTypes with an empty entry', set('eventTypes', ['']), 'body.eventTypes.0'],
    ['eventTypes with an entry of 101 characters', set('eventTypes', [long(101)]), 'body.eventTypes.0'],
    ['secret a number', set('secret', 1234567890123456), 'body.secret'],
    ['secret null', set('secret', null), 'body.secret'],
    ['secret of 15 characters', set('secret', long(15)), 'body.secret'],
    ['secret of 257 characters', set('secret', long(257)), 'body.secret'],
  ],
  VerifyWebhook: [
    ['webhookId missing', drop('webhookId'), 'body.webhookId'],
    ['webhookId a number', set('webhookId', 42), 'body.webhookId'],
    ['webhookId null', set('webhookId', null), 'body.webhookId'],
    ['webhookId empty', set('webhookId', ''), 'body.webhookId'],
    ['webhookId of 201 characters', set('webhookId', long(201)), 'body.webhookId'],
    ['body missing', drop('body'), 'body.body'],
    ['body a number', set('body', 42), 'body.body'],
    ['body an object', set('body', { type: 'message.created' }), 'body.body'],
    ['body over 256 KiB', set('body', long(256 * 1024 + 1)), 'body.body'],
    ['signature a number', set('signature', 42), 'body.signature'],
    ['signature of 201 characters', set('signature', long(201)), 'body.signature'],
  ],
  VerifyWebhookSignatures: [
    ['secret missing', drop('secret'), 'body.secret'],
    ['secret a number', set('secret', 42), 'body.secret'],
    ['secret empty', set('secret', ''), 'body.secret'],
    ['secret of 257 characters', set('secret', long(257)), 'body.secret'],
    ['body a number', set('body', 42), 'body.body'],
    ['body over 256 KiB', set('body', long(256 * 1024 + 1)), 'body.body'],
    ['signature a number', set('signature', 42), 'body.signature'],
    ['signature of 201 characters', set('signature', long(201)), 'body.signature'],
    ['neither body nor events', drop('body'), 'body'],
    ['both body and events', set('events', [{ type: 'message.created' }]), 'body'],
    ['events empty', toEvents([]), 'body.events'],
    ['events a string', toEvents('[]'), 'body.events'],
    ['events with 1001 entries', toEvents(Array.from({ length: 1001 }, (_, i) => i)), 'body.events'],
  ],
  RegisterPushDevice: deviceVariants(),
  PutPushConfig: pushConfigVariants(),
  SubscribeWebPush: subscriptionVariants(),
  AcknowledgePushDelivery: [
    ...textVariants('pushId', { required: true }),
    ['pushId without the push_ prefix', set('pushId', randomBytes(16).toString('hex')), 'body.pushId'],
    ['pushId with another prefix', set('pushId', `whd_${randomBytes(16).toString('hex')}`), 'body.pushId'],
    ['pushId of 15 characters after push_', set('pushId', `push_${long(15)}`), 'body.pushId'],
    ['pushId of 41 characters after push_', set('pushId', `push_${long(41)}`), 'body.pushId'],
    ['pushId with a dash', set('pushId', `push_${long(10)}-${long(10)}`), 'body.pushId'],
    ['pushId with a space', set('pushId', `push_${long(10)} ${long(10)}`), 'body.pushId'],
  ],
  SummarizeThread: idVariants('roomId', true),
  SuggestReplies: [
    ...idVariants('roomId', true),
    ['messageId a string', set('messageId', String(1)), 'body.messageId'],
    ['messageId null', set('messageId', null), 'body.messageId'],
    ['messageId zero', set('messageId', 0), 'body.messageId'],
    ['messageId negative', set('messageId', -1), 'body.messageId'],
    ['messageId fractional', set('messageId', 1.5), 'body.messageId'],
  ],
  SetProjectAiQuota: [
    ['monthlyInvocations missing', drop('monthlyInvocations'), 'body.monthlyInvocations'],
    ['monthlyInvocations a string', set('monthlyInvocations', '100'), 'body.monthlyInvocations'],
    ['monthlyInvocations a boolean', set('monthlyInvocations', true), 'body.monthlyInvocations'],
    ['monthlyInvocations an object', set('monthlyInvocations', { value: 100 }), 'body.monthlyInvocations'],
    ['monthlyInvocations negative', set('monthlyInvocations', -1), 'body.monthlyInvocations'],
    ['monthlyInvocations fractional', set('monthlyInvocations', 1.5), 'body.monthlyInvocations'],
    ['monthlyInvocations over 100000000', set('monthlyInvocations', 100_000_001), 'body.monthlyInvocations'],
  ],
  CreateAgent: [
    ...handleVariants(),
    ...agentTextVariants('name', { required: true, max: 80 }),
    ...agentTextVariants('instructions', { required: true, max: 4000 }),
    ...agentTextVariants('model', { max: 200 }),
  ],
  UpdateAgent: [
    ['no field at all', () => ({}), 'body'],
    ['handle, which never changes', set('handle', agentHandle()), 'body'],
    ...agentTextVariants('name', { max: 80 }),
    ...agentTextVariants('instructions', { max: 4000 }),
    ...agentTextVariants('model', { nullable: true, max: 200 }),
  ],
  InvokeAgent: [
    ...idVariants('roomId', true),
    ['prompt a number', set('prompt', 42), 'body.prompt'],
    ['prompt null', set('prompt', null), 'body.prompt'],
    ['prompt an object', set('prompt', { text: 'x' }), 'body.prompt'],
    ['prompt of 4001 characters', set('prompt', long(4001)), 'body.prompt'],
  ],
  StartRoomHandoff: [...idVariants('agentId', false), ...noteVariants()],
  CompleteRoomHandoff: [
    ['disposition missing', drop('disposition'), 'body.disposition'],
    ['disposition a number', set('disposition', 42), 'body.disposition'],
    ['disposition null', set('disposition', null), 'body.disposition'],
    ['disposition an object', set('disposition', { code: 'resolved' }), 'body.disposition'],
    ['disposition empty', set('disposition', ''), 'body.disposition'],
    ['disposition of 201 characters', set('disposition', long(201)), 'body.disposition'],
    ...noteVariants(),
  ],
  SetDispositions: dispositionVariants(),
};

describe.each(Object.entries(fieldVariants).map(([id, variants]) => ({ id, variants })))('$id body fields', ({ id, variants }) => {
  it.each(variants.map(([label, change, field]) => ({ label, change, field })))('$label → 400 naming $field', async ({ change, field }) => {
    // Prepare
    const body = change(requests[id]?.body?.() ?? {});

    // Act
    const response = await send(id, { body });

    // Assess
    expectInvalid(response, field);
  });
});

describe('query parameters', () => {
  it.each([
    { path: '/rooms?scope=all', field: 'query.scope' },
    { path: '/rooms?limit=0', field: 'query.limit' },
    { path: '/rooms?limit=101', field: 'query.limit' },
    { path: '/rooms?limit=lots', field: 'query.limit' },
    { path: '/rooms?cursor=a%23b', field: 'query.cursor' },
    { path: `/rooms?cursor=${long(129)}`, field: 'query.cursor' },
  ])('GET $path → 400 naming $field', async ({ path, field }) => {
    // Act
    const response = await api(path, { token: memberToken });

    // Assess
    expectInvalid(response, field);
  });

  it.each([
    { query: 'limit=0', field: 'query.limit' },
    { query: 'limit=101', field: 'query.limit' },
    { query: 'before=x', field: 'query.before' },
    { query: 'after=-1', field: 'query.after' },
  ])('GET /rooms/{roomId}/messages?$query → 400 naming $field', async ({ query, field }) => {
    // Act
    const response = await api(`/rooms/${roomId}/messages?${query}`, { token: adminToken });

    // Assess
    expectInvalid(response, field);
  });

  it.each(['0', '101', '1.5'])('GET /admin/moderation/flags?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/admin/moderation/flags?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, 'query.limit');
  });

  it.each(['0', '101', '1.5', '-1', 'lots'])('GET /admin/webhooks/deliveries?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/admin/webhooks/deliveries?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, 'query.limit');
  });

  it.each(['0', '101', '1.5', 'lots'])('GET /rooms/{roomId}/summaries?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/rooms/${roomId}/summaries?limit=${limit}`, { token: memberToken });

    // Assess
    expectInvalid(response, 'query.limit');
  });

  it.each([
    { query: 'status=open', field: 'query.status' },
    { query: 'status=CLAIMED', field: 'query.status' },
    { query: 'status=', field: 'query.status' },
    { query: 'limit=0', field: 'query.limit' },
    { query: 'limit=101', field: 'query.limit' },
    { query: 'limit=1.5', field: 'query.limit' },
    { query: 'limit=lots', field: 'query.limit' },
  ])('GET /agent-queue/tasks?$query → 400 naming $field', async ({ query, field }) => {
    // Act
    const response = await api(`/agent-queue/tasks?${query}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, field);
  });

  it.each(['', '?status=claimed', '?status=resolved&limit=1', '?limit=100'])(
    'GET /agent-queue/tasks%s is accepted (the values and bounds)',
    async (query) => {
      // Act
      const response = await api(`/agent-queue/tasks${query}`, { apiKey: project.apiKey });

      // Assess
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
    },
  );

  it.each(['1', '100'])('GET /rooms/{roomId}/summaries?limit=%s is accepted (the bounds)', async (limit) => {
    // Act
    const response = await api(`/rooms/${roomId}/summaries?limit=${limit}`, { token: memberToken });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { summaries: [] } });
  });

  it('GET /push/web/vapid-public-key?projectId=<129 characters> → 400 naming query.projectId', async () => {
    // Act
    const response = await api(`/push/web/vapid-public-key?projectId=${long(129)}`);

    // Assess
    expectInvalid(response, 'query.projectId');
  });

  it.each(['1', '100'])('GET /admin/webhooks/deliveries?limit=%s is accepted (the bounds)', async (limit) => {
    // Act
    const response = await api(`/admin/webhooks/deliveries?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
  });
});

describe('the SSE stream resume point', () => {
  it.each([
    {
      variant: 'a Last-Event-ID header that is not a message id',
      query: '',
      headers: { 'last-event-id': 'abc' },
      field: 'header.last-event-id',
    },
    { variant: 'a negative Last-Event-ID header', query: '', headers: { 'last-event-id': '-5' }, field: 'header.last-event-id' },
    {
      variant: 'a lastEventId query that is not a message id',
      query: '?lastEventId=abc',
      headers: {} as Record<string, string>,
      field: 'query.lastEventId',
    },
  ])('answers 400 naming $field to $variant', async ({ query, headers, field }) => {
    // Act
    const response = await send('StreamRoom', { path: `/rooms/${roomId}/stream${query}`, headers });

    // Assess
    expectInvalid(response, field);
  });
});

describe('webhook signature checks', () => {
  it.each(['VerifyWebhook', 'VerifyWebhookSignatures'])(
    '%s without a signature in the body or a header → 400 naming body.signature',
    async (id) => {
      // Act
      const response = await send(id, { body: drop('signature')(requests[id]?.body?.() ?? {}) });

      // Assess
      expectInvalid(response, 'body.signature');
    },
  );

  it('VerifyWebhookSignatures accepts the batch form (control for the events variants)', async () => {
    // Prepare
    const events = [{ type: 'message.created' }, { type: 'mention' }];

    // Act
    const response = await send('VerifyWebhookSignatures', {
      body: { secret: WEBHOOK_SECRET, events, signature: sign(WEBHOOK_SECRET, JSON.stringify(events)) },
    });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { valid: true, count: 2 } });
  });
});

describe('push requests beyond the body schemas', () => {
  it.each([
    { platform: 'fcm', length: 16, token: (fresh: string) => `a:b_c-d.e${fresh.slice(0, 7)}` },
    { platform: 'android', length: 4096, token: (fresh: string) => `${'A'.repeat(4086)}${fresh}` },
    { platform: 'apns', length: 64, token: (fresh: string) => `${'aB'.repeat(27)}${fresh}` },
    { platform: 'ios', length: 200, token: (fresh: string) => `${'0'.repeat(190)}${fresh}` },
  ])(
    'RegisterPushDevice accepts an $platform token of $length characters (control for the token variants)',
    async ({ platform, length, token }) => {
      // Prepare: fresh digits, so the token is new to the member however often this runs
      const fresh = token(randomBytes(5).toString('hex'));

      // Act
      const response = await send('RegisterPushDevice', { body: { platform, token: fresh } });

      // Assess
      expect(fresh).toHaveLength(length);
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 201, error: undefined });
      expect(response.body).toMatchObject({ platform, token: fresh });
    },
  );

  it('SubscribeWebPush refuses a plain http endpoint → 400 push_endpoint_not_https naming body.endpoint', async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: { ...requests.SubscribeWebPush?.body?.(), endpoint: 'http://example.com/sub/1' },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'push_endpoint_not_https' });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.endpoint' }));
  });

  it('SubscribeWebPush answers 403 project_mismatch when X-Service-Project-Id names another project', async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: requests.SubscribeWebPush?.body?.(),
      headers: { 'x-service-project-id': rotatable.projectId },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'project_mismatch' });
  });

  it("SubscribeWebPush accepts X-Service-Project-Id naming the token's project (control)", async () => {
    // Act
    const response = await send('SubscribeWebPush', {
      body: requests.SubscribeWebPush?.body?.(),
      headers: { 'x-service-project-id': project.projectId },
    });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 201, error: undefined });
  });

  it('UnsubscribeWebPush accepts the endpoint percent-encoded (control for the id form)', async () => {
    // Prepare
    const body = requests.SubscribeWebPush?.body?.() as Body;
    await send('SubscribeWebPush', { body });

    // Act
    const response = await send('UnsubscribeWebPush', { path: `/push/web/subscribe/${encodeURIComponent(String(body.endpoint))}` });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 204, error: undefined });
  });

  it.each([
    'https://push.example.com',
    'https://PUSH.example.com/sub/Abc',
    'https://push.example.com:443/sub/x1',
    'https://push.example.com/sub/ü',
  ])('UnsubscribeWebPush finds %s by the spelling it was subscribed with, whatever the URL parser makes of it', async (spelling) => {
    // Prepare: a unique path, so the endpoint is new however often this runs
    const base = requests.SubscribeWebPush?.body?.() as Body;
    const endpoint = `${spelling}${spelling.includes('/sub/') ? '' : '/sub'}/${randomBytes(4).toString('hex')}`;
    expect((await send('SubscribeWebPush', { body: { ...base, endpoint } })).status).toBe(201);

    // Act
    const response = await send('UnsubscribeWebPush', { path: `/push/web/subscribe/${encodeURIComponent(endpoint)}` });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 204, error: undefined });
  });

  it('PutPushConfig and GetPushConfig answer without any key material (control of the accepted keys)', async () => {
    // Prepare
    const body = requests.PutPushConfig?.body?.() as Body;

    // Act
    const put = await send('PutPushConfig', { body });
    const read = await send('GetPushConfig');

    // Assess
    const stored = read.body.configs.find((config: any) => config.environment === body.environment);
    expect(put.body).toEqual({
      environment: body.environment,
      fcmProjectId: body.fcmProjectId,
      apnsBundleId: body.apnsBundleId,
      apnsUseSandbox: true,
      webPushEnabled: true,
      hasFcm: true,
      hasApns: true,
      updatedAt: expect.any(String),
    });
    expect(stored).toEqual(put.body);
    for (const leak of [String(body.fcmServerKey), 'PRIVATE KEY', 'client_email', String(body.apnsKeyId), String(body.apnsTeamId)]) {
      expect(JSON.stringify([put.body, read.body])).not.toContain(leak);
    }
  });

  it('RegisterPushDevice and SubscribeWebPush answer 200 with the same id to the same token or endpoint again', async () => {
    // Prepare
    const device = requests.RegisterPushDevice?.body?.() as Body;
    const subscription = requests.SubscribeWebPush?.body?.() as Body;
    const [firstDevice, firstSubscription] = [
      await send('RegisterPushDevice', { body: device }),
      await send('SubscribeWebPush', { body: subscription }),
    ];

    // Act
    const [againDevice, againSubscription] = [
      await send('RegisterPushDevice', { body: device }),
      await send('SubscribeWebPush', { body: { ...subscription, keys: subscriptionKeys() } }),
    ];

    // Assess
    expect([firstDevice.status, againDevice.status, firstSubscription.status, againSubscription.status]).toEqual([201, 200, 201, 200]);
    expect(againDevice.body.id).toBe(firstDevice.body.id);
    expect(againSubscription.body).toMatchObject({ id: firstSubscription.body.id, failureCount: 0, active: true });
    const devices = (await send('ListPushDevices')).body.devices.filter((d: any) => d.token === device.token);
    expect(devices.map((d: any) => d.id)).toEqual([firstDevice.body.id]);
  });

  it('ListWebPushSubscriptions masks the endpoint (a bearer capability) and names its host', async () => {
    // Prepare
    const body = requests.SubscribeWebPush?.body?.() as Body;
    const subscribed = await send('SubscribeWebPush', { body });

    // Act
    const list = await send('ListWebPushSubscriptions');

    // Assess
    const listed = list.body.subscriptions.find((subscription: any) => subscription.id === subscribed.body.id);
    expect(listed).toMatchObject({ endpointHost: 'push.example.com', userAgent: body.userAgent, failureCount: 0, failure_count: 0 });
    expect(JSON.stringify([subscribed.body, list.body])).not.toContain(String(body.endpoint));
  });

  it('PutPushConfig accepts null for every key field (it clears) and defaults the environment to production', async () => {
    // Prepare
    const cleared = { fcmServerKey: null, fcmProjectId: null, fcmServiceAccountJson: null, apnsBundleId: null };
    const keys = { apnsKeyId: null, apnsTeamId: null, apnsPrivateKey: null };

    // Act
    const response = await send('PutPushConfig', { body: { ...cleared, ...keys } });

    // Assess
    expect([200, 201]).toContain(response.status);
    expect(response.body).toMatchObject({
      environment: 'production',
      fcmProjectId: null,
      apnsBundleId: null,
      hasFcm: false,
      hasApns: false,
    });
  });

  it.each([
    { variant: 'no project named', query: '', headers: {} as Record<string, string> },
    { variant: 'an empty projectId', query: '?projectId=', headers: {} },
    { variant: 'a projectId that cannot be one', query: '?projectId=a%23b', headers: {} },
    { variant: 'an X-Service-Project-Id that cannot be one', query: '', headers: { 'x-service-project-id': 'A B' } },
  ])('GetVapidPublicKey with $variant → 404 project_not_found', async ({ query, headers }) => {
    // Act
    const response = await api(`/push/web/vapid-public-key${query}`, { headers });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'project_not_found' });
  });

  it('GetVapidPublicKey answers a project that does not exist as one that does: a stable P-256 key of its own, nothing stored', async () => {
    // Prepare
    const missing = uniqueId('missing');
    const keyOf = (projectId: string, byHeader = false) =>
      byHeader
        ? api('/push/web/vapid-public-key', { headers: { 'x-service-project-id': projectId } })
        : api(`/push/web/vapid-public-key?projectId=${projectId}`);

    // Act
    const known = await keyOf(project.projectId);
    const answers = { unknown: await keyOf(missing), again: await keyOf(missing), byHeader: await keyOf(missing, true) };
    const otherUnknown = await keyOf(uniqueId('missing'));

    // Assess: the same status, headers and body shape; a point on the curve, as a browser's PushManager needs
    const shapeOf = (response: typeof known) => ({
      status: response.status,
      headers: (() => {
        const names: string[] = [];
        response.headers.forEach((_value, name) => {
          names.push(name);
        });
        return names.sort();
      })(),
      cacheControl: response.headers.get('cache-control'),
      fields: Object.keys(response.body),
      length: String(response.body.publicKey).length,
    });
    for (const response of [...Object.values(answers), otherUnknown]) {
      expect(shapeOf(response)).toEqual(shapeOf(known));
      const peer = createECDH('prime256v1');
      peer.generateKeys();
      expect(() => peer.computeSecret(Buffer.from(response.body.publicKey, 'base64url'))).not.toThrow();
    }
    expect(answers.again.body).toEqual(answers.unknown.body);
    expect(answers.byHeader.body).toEqual(answers.unknown.body);
    expect(new Set([known, answers.unknown, otherUnknown].map((response) => response.body.publicKey)).size).toBe(3);
    expect(await get(vapidKey(missing).pk, vapidKey(missing).sk)).toBeUndefined();
  });
});

describe('AI requests beyond the body schemas', () => {
  const freshSummarizer = () => project.token(uniqueId('summarizer'), ['admin']);
  const newRoomByKey = async () => {
    const id = uniqueId('ai-room');
    await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group' } });
    return id;
  };
  const unknownAgentPath = (suffix = '') => `/agents/agt_unknown${randomBytes(5).toString('hex')}${suffix}`;

  it('SummarizeThread answers for any message of the thread, from its root', async () => {
    // Act
    const response = await api(`/messages/${thread.replyIds[1]}/summary`, { token: await freshSummarizer(), body: { roomId } });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { summary: expect.stringMatching(/^- .+(\n- .+)*$/), rootMessageId: thread.rootId, messageCount: 3, truncated: false },
    });
  });

  it('SummarizeThread of a thread of 2 messages → 400 thread_too_short', async () => {
    // Prepare
    const short = await postThread(project.projectId, { token: memberToken }, roomId, 1);

    // Act
    const response = await api(`/messages/${short.rootId}/summary`, { token: await freshSummarizer(), body: { roomId } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'thread_too_short' });
  });

  it.each([
    { variant: "a message of another room (the thread's root named with a room it is not in)", other: true },
    { variant: 'a message id that exists nowhere', other: false },
  ])('SummarizeThread of $variant → 404 message_not_found', async ({ other }) => {
    // Prepare
    const [token, otherRoom] = await Promise.all([freshSummarizer(), newRoomByKey()]);
    const [messageId, inRoom] = other ? [thread.rootId, otherRoom] : ['9007199254740991', roomId];

    // Act
    const response = await api(`/messages/${messageId}/summary`, { token, body: { roomId: inRoom } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'message_not_found' });
  });

  it('SuggestReplies answers at most three suggestions and the model, with or without messageId', async () => {
    // Act
    const [latest, upTo] = [
      await send('SuggestReplies', { body: { roomId } }),
      await send('SuggestReplies', { body: requests.SuggestReplies?.body?.() }),
    ];

    // Assess
    for (const response of [latest, upTo]) {
      expect({ status: response.status, keys: Object.keys(response.body ?? {}).sort() }).toEqual({
        status: 200,
        keys: ['model', 'suggestions'],
      });
      expect(response.body.suggestions.length).toBeGreaterThan(0);
      expect(response.body.suggestions.length).toBeLessThanOrEqual(3);
      for (const suggestion of response.body.suggestions) expect(suggestion).toEqual(expect.any(String));
      expect(response.body.model).toEqual(expect.any(String));
    }
  });

  it("SuggestReplies with a messageId that is not the room's → 404 message_not_found", async () => {
    // Prepare
    const otherRoom = await newRoomByKey();

    // Act
    const response = await api('/messages/suggest-replies', { token: adminToken, body: { roomId: otherRoom, messageId: thread.rootId } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'message_not_found' });
  });

  it('CreateAgent answers 409 agent_handle_taken to a handle the project has, and frees it on delete', async () => {
    // Prepare
    const body = requests.CreateAgent?.body?.() as Body;
    const first = await send('CreateAgent', { body });

    // Act
    const again = await send('CreateAgent', { body: { ...body, name: 'Another' } });
    const deleted = await api(`/agents/${first.body.id}`, { apiKey: project.apiKey, method: 'DELETE' });
    const afterDelete = await send('CreateAgent', { body });

    // Assess
    expect(first.body).toMatchObject({ handle: body.handle, userId: `agent:${body.handle}`, model: 'validation-model' });
    expect({ status: again.status, code: again.body?.error?.code }).toEqual({ status: 409, code: 'agent_handle_taken' });
    expect(deleted.status).toBe(204);
    expect(afterDelete.status).toBe(201);
    expect(afterDelete.body.id).not.toBe(first.body.id);
  });

  it('UpdateAgent accepts model null (the agent answers with AI_MODEL again) and keeps the other fields', async () => {
    // Prepare
    const agent = await createAgent({ apiKey: project.apiKey }, { model: 'some-model' });

    // Act
    const response = await api(`/agents/${agent.id}`, { apiKey: project.apiKey, method: 'PATCH', body: { model: null } });

    // Assess
    expect({ status: response.status, body: response.body }).toMatchObject({
      status: 200,
      body: { id: agent.id, handle: agent.handle, name: agent.name, instructions: agent.instructions, model: null },
    });
  });

  it.each([
    { id: 'UpdateAgent', path: () => unknownAgentPath() },
    { id: 'DeleteAgent', path: () => unknownAgentPath() },
    { id: 'InvokeAgent', path: () => unknownAgentPath('/invoke') },
  ])('$id of an agent that does not exist → 404 agent_not_found', async ({ id, path }) => {
    // Act
    const response = await send(id, { path: path(), body: requests[id]?.body?.() });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'agent_not_found' });
  });

  it("InvokeAgent without a prompt answers 201 with the agent's message in the room", async () => {
    // Act
    const response = await send('InvokeAgent', { body: { roomId } });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body.message).toMatchObject({ roomId, userId: expect.stringMatching(/^agent:/), content: expect.any(String) });
  });

  it('InvokeAgent during a handoff → 409 human_handoff_active, and nothing is posted', async () => {
    // Prepare
    const handedOff = await newRoomByKey();
    await api(`/rooms/${handedOff}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });

    // Act
    const response = await api(`/agents/${agentId}/invoke`, { token: adminToken, body: { roomId: handedOff } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 409, code: 'human_handoff_active' });
    expect((await api(`/rooms/${handedOff}/messages`, { apiKey: project.apiKey })).body.messages).toEqual([]);
  });

  it('StartRoomHandoff accepts no body at all (no agent, no note); a second take-over → 409 handoff_active', async () => {
    // Prepare
    const room = await newRoomByKey();

    // Act
    const first = await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey });
    const second = await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });

    // Assess
    expect({ status: first.status, error: first.body?.error }).toEqual({ status: 201, error: undefined });
    expect(first.body).toMatchObject({ roomId: room, state: 'human_active', agentId: null, note: null, takenBy: 'service' });
    expect({ status: second.status, code: second.body?.error?.code }).toEqual({ status: 409, code: 'handoff_active' });
  });

  it("CompleteRoomHandoff with a code the project lacks → 400 unknown_disposition naming the allowed codes; the project's own code is accepted", async () => {
    // Prepare
    const room = await newRoomByKey();
    await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });
    await send('SetDispositions', { body: requests.SetDispositions?.body?.() });

    // Act
    const unknown = await send('CompleteRoomHandoff', { path: `/rooms/${room}/handoff`, body: { disposition: 'refunded' } });
    const own = await send('CompleteRoomHandoff', { path: `/rooms/${room}/handoff`, body: { disposition: VALIDATION_DISPOSITION.code } });

    // Assess
    expect({ status: unknown.status, code: unknown.body?.error?.code }).toEqual({ status: 400, code: 'unknown_disposition' });
    expect(unknown.body.error.details).toEqual({
      allowed: ['resolved', 'escalated', 'follow_up', 'no_response', 'spam', VALIDATION_DISPOSITION.code],
    });
    expect({ status: own.status, state: own.body.state, disposition: own.body.disposition }).toEqual({
      status: 200,
      state: 'completed',
      disposition: VALIDATION_DISPOSITION.code,
    });
  });

  it('CompleteRoomHandoff of a room without an active handoff → 409 no_active_handoff', async () => {
    // Act
    const response = await send('CompleteRoomHandoff', { path: `/rooms/${roomId}/handoff`, body: requests.CompleteRoomHandoff?.body?.() });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 409, code: 'no_active_handoff' });
  });

  it('SetDispositions accepts no codes of its own and 50 (the bounds)', async () => {
    // Prepare
    const fifty = Array.from({ length: 50 }, () => ({ code: dispositionCode(), label: 'Bound' }));

    // Act
    const none = await send('SetDispositions', { body: { dispositions: [] } });
    const full = await send('SetDispositions', { body: { dispositions: fifty } });
    await send('SetDispositions', { body: requests.SetDispositions?.body?.() });

    // Assess
    expect({ status: none.status, count: none.body.dispositions?.length }).toEqual({ status: 200, count: 5 });
    expect({ status: full.status, count: full.body.dispositions?.length }).toEqual({ status: 200, count: 55 });
  });

  it('SetProjectAiQuota accepts 0 and 100000000 (the bounds); null returns the project to the default', async () => {
    // Prepare
    const initial = await setAiQuota(rotatable.projectId, null);

    // Act
    const zero = await send('SetProjectAiQuota', { body: { monthlyInvocations: 0 } });
    const most = await send('SetProjectAiQuota', { body: { monthlyInvocations: 100_000_000 } });
    const cleared = await send('SetProjectAiQuota', { body: { monthlyInvocations: null } });

    // Assess
    expect({ status: zero.status, body: zero.body }).toEqual({
      status: 200,
      body: { month: initial.month, used: initial.used, quota: 0, remaining: 0 },
    });
    expect({ status: most.status, quota: most.body.quota, remaining: most.body.remaining }).toEqual({
      status: 200,
      quota: 100_000_000,
      remaining: 100_000_000 - initial.used,
    });
    expect({ status: cleared.status, body: cleared.body }).toEqual({ status: 200, body: initial });
  });

  it('SetProjectAiQuota of a project that does not exist → 404 project_not_found', async () => {
    // Act
    const response = await send('SetProjectAiQuota', {
      path: `/platform/projects/${uniqueId('missing')}/ai-quota`,
      body: requests.SetProjectAiQuota?.body?.(),
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'project_not_found' });
  });
});

const paramRoutes = httpRoutes.filter((route) => route.path.includes('{'));

/**
 * Invalid values per path parameter. Most are ids (no `#`, no space, at most 128 characters);
 * webhook ids are only bounded in length (1..200); delivery ids must be `whd_` and 32 lowercase hex;
 * device ids `pd_` and 22 letters or digits; a web push subscription is named by its id or its
 * (percent-encoded) endpoint, so only its length (1..2048) is checked; message ids are 1-16 digits;
 * project ids 2-63 of lowercase letters, digits and `-`, not starting with `-`.
 */
const badPathValues = (param: string): string[] => {
  const idValues = ['bad%23id', encodeURIComponent('a b'), long(129)];
  if (param === 'webhookId') return [long(201)];
  if (param === 'idOrEndpoint') return [long(2049), encodeURIComponent(`https://push.example.com/${long(2024)}`)];
  if (param === 'deviceId')
    return [...idValues, `pd_${'A'.repeat(21)}`, `pd_${'A'.repeat(23)}`, `pd_${'A'.repeat(10)}-${'A'.repeat(11)}`, `ws_${'A'.repeat(22)}`];
  if (param === 'deliveryId')
    return [...idValues, `whd_${'A'.repeat(32)}`, `whd_${'0'.repeat(31)}`, `whd_${'0'.repeat(33)}`, `wh_${'0'.repeat(32)}`];
  if (param === 'messageId') return [...idValues, 'abc', '-1', '1.5', '1'.repeat(17)];
  if (param === 'projectId') return [...idValues, 'Upper-Case', '-dash', 'a', 'under_score'];
  return idValues;
};

describe('path parameters', () => {
  describe.each(paramRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))('$method $path', ({ id, path }) => {
    const params = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

    it.each(params.flatMap((param) => badPathValues(param).map((value) => ({ param, value }))))(
      '$param = $value → 400 naming path.$param',
      async ({ param, value }) => {
        // Prepare
        const valid = requests[id]?.path() ?? '';
        const segments = path.split('/');
        const concrete = valid
          .split('/')
          .map((segment, index) => (segments[index] === `{${param}}` ? value : segment))
          .join('/');

        // Act
        const response = await send(id, { path: concrete, body: requests[id]?.body?.() });

        // Assess
        expectInvalid(response, `path.${param}`);
      },
    );
  });

  it('answers 400, not a gateway error, to a malformed percent-encoding in the path', async () => {
    // Act
    const response = await api('/rooms/%E0%A4%A', { token: adminToken });

    // Assess
    expect(response.status).toBe(400);
  });
});

/** Routes that name their room in the body rather than the path. */
const bodyRoomRoutes = ['CreateMessage', 'ImportMessage', 'ImportMessageBatch', 'SummarizeThread', 'SuggestReplies', 'InvokeAgent'];
const roomRoutes = httpRoutes.filter((route) => route.path.includes('{roomId}') || bodyRoomRoutes.includes(route.id));

describe('an unknown room', () => {
  it.each(roomRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
    '$method $path ($id) → 404 room_not_found',
    async ({ id, path: template }) => {
      // Prepare
      const missing = uniqueId('missing');
      const valid = requests[id]?.body?.();
      const body =
        valid && 'messages' in valid
          ? { messages: (valid.messages as Body[]).map((row) => ({ ...row, roomId: missing })) }
          : valid && 'roomId' in valid
            ? { ...valid, roomId: missing }
            : valid;
      // The room's segment of the path, whichever room the request names (some draw a fresh one from a pool).
      const segments = template.split('/');
      const path = (requests[id]?.path() ?? '')
        .split('/')
        .map((segment, index) => (segments[index] === '{roomId}' ? missing : segment))
        .join('/');

      // Act
      const response = await send(id, { path, body });

      // Assess
      expect(response).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    },
  );
});
