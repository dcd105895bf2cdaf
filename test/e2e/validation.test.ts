import { createHmac, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DeliveryItem, deliveriesIndexKey, deliveryKey } from '#shared/db/webhook';
import { httpRoutes } from '../../lib/routes/index';
import { type ApiOptions, api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { raw, table } from '../support/raw-table';
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

describe('a request without a body', () => {
  it.each(bodyRoutes.filter((route) => route.id !== 'RotateProjectKeys').map((route) => route.id))(
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

const paramRoutes = httpRoutes.filter((route) => route.path.includes('{'));

/**
 * Invalid values per path parameter. Most are ids (no `#`, no space, at most 128 characters);
 * webhook ids are only bounded in length (1..200); delivery ids must be `whd_` and 32 lowercase hex.
 */
const badPathValues = (param: string): string[] => {
  const idValues = ['bad%23id', encodeURIComponent('a b'), long(129)];
  if (param === 'webhookId') return [long(201)];
  if (param === 'deliveryId')
    return [...idValues, `whd_${'A'.repeat(32)}`, `whd_${'0'.repeat(31)}`, `whd_${'0'.repeat(33)}`, `wh_${'0'.repeat(32)}`];
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

const roomRoutes = httpRoutes.filter(
  (route) => route.path.includes('{roomId}') || ['CreateMessage', 'ImportMessage', 'ImportMessageBatch'].includes(route.id),
);

describe('an unknown room', () => {
  it.each(roomRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
    '$method $path ($id) → 404 room_not_found',
    async ({ id }) => {
      // Prepare
      const missing = uniqueId('missing');
      const valid = requests[id]?.body?.();
      const body =
        valid && 'messages' in valid
          ? { messages: (valid.messages as Body[]).map((row) => ({ ...row, roomId: missing })) }
          : valid && 'roomId' in valid
            ? { ...valid, roomId: missing }
            : valid;
      const path = (requests[id]?.path() ?? '').replace(roomId, missing);

      // Act
      const response = await send(id, { path, body });

      // Assess
      expect(response).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    },
  );
});
