import { createHash, createHmac, randomBytes } from 'node:crypto';
import Pusher from 'pusher';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, runtime, uniqueId } from '../support/api';
import { pusherSignedQuery } from '../support/pusher';
import { get } from '../support/raw-table';
import { projectBeforeAll, realtimeHelpers, settle } from '../support/realtime-suite';

/**
 * Pusher compatibility over HTTP: the project's Pusher app (`/admin/pusher-app`), the channel auth
 * pusher-js and Laravel Echo call (`/auth/channel`, form-encoded or JSON), and the trigger API of
 * the Pusher server libraries (`/apps/<appId>/events`, `/batch_events`), driven by the real
 * `pusher` package. Every signature is checked against an HMAC computed here.
 */

const project = projectBeforeAll('pusher-http');
const noApp = projectBeforeAll('pusher-http-no-app');
const { user, room, join } = realtimeHelpers(project);

interface App {
  appId: string;
  key: string;
  secret: string;
}
let app: App;

const port = () => Number(new URL(runtime().baseUrl).port);
const pusherOf = (given: App) => new Pusher({ ...given, host: '127.0.0.1', port: String(port()), useTLS: false });

beforeAll(async () => {
  const created = await api('/admin/pusher-app', { apiKey: project.apiKey, method: 'POST' });
  expect(created.status).toBe(201);
  app = created.body;
});

const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');
/** Pusher's socket id of a connection id, as the protocol module defines it (the id's bytes as one number, split in two). */
function pusherSocketIdOf(connectionId: string): string {
  const digits = BigInt(`0x${Buffer.from(connectionId, 'utf8').toString('hex')}`).toString(10);
  const half = Math.ceil(digits.length / 2);
  return `${digits.slice(0, half)}.${digits.slice(half)}`;
}

/** A trigger request signed here (`test/support/pusher.ts`), tampered with as `options` say. */
const signedTrigger = (given: App, path: string, body: string, options: Parameters<typeof pusherSignedQuery>[3] = {}) =>
  api(`${path}?${pusherSignedQuery(given, path, body, options)}`, { rawBody: body, headers: { 'content-type': 'application/json' } });

/** A room of the project with a member's welcomed socket on it. */
async function watchedRoom() {
  const { owner, roomId } = await room();
  const socket = await join(roomId, owner.token);
  return { owner, roomId, socket };
}

describe('the Pusher app', () => {
  it('answers GET without the secret, and 404 pusher_app_not_found before one exists', async () => {
    // Act
    const read = await api('/admin/pusher-app', { apiKey: project.apiKey });
    const none = await api('/admin/pusher-app', { apiKey: noApp.apiKey });

    // Assess
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { appId: app.appId, key: app.key } });
    expect(JSON.stringify(read.body)).not.toContain(app.secret);
    expect({ status: none.status, code: none.body.error.code }).toEqual({ status: 404, code: 'pusher_app_not_found' });
  });

  it('rotates key and secret, keeps the app id, and the old key stops resolving at once', async () => {
    // Prepare
    const rotating = projectBeforeAllLike();
    const first = (await api('/admin/pusher-app', { apiKey: (await rotating).apiKey, method: 'POST' })).body as App;

    // Act
    const rotated = await api('/admin/pusher-app', { apiKey: (await rotating).apiKey, method: 'POST' });
    const oldSigned = await signedTrigger(
      first,
      `/apps/${first.appId}/events`,
      JSON.stringify({ name: 'x', data: '{}', channel: 'private-room-none' }),
    );

    // Assess
    expect(rotated.status).toBe(201);
    expect(rotated.body.appId).toBe(first.appId);
    expect(rotated.body.key).not.toBe(first.key);
    expect(rotated.body.secret).not.toBe(first.secret);
    expect(await get(`PUSHERKEY#${first.key}`, 'PUSHER_APP')).toBeUndefined();
    expect((await get(`PUSHERKEY#${rotated.body.key}`, 'PUSHER_APP'))?.appId).toBe(first.appId);
    expect({ status: oldSigned.status, code: oldSigned.body.error.code }).toEqual({ status: 401, code: 'invalid_pusher_signature' });
  });

  it('stores the project item and the lookups by key and by app id, each with the same record', async () => {
    // Act
    const items = await Promise.all([
      get(`P#${project.projectId}`, 'PUSHER_APP'),
      get(`PUSHERKEY#${app.key}`, 'PUSHER_APP'),
      get(`PUSHERAPP#${app.appId}`, 'PUSHER_APP'),
    ]);

    // Assess: the shared runtime runs without webhook-key, so the secret is in plain, as webhook
    // secrets are there; the sealed form needs a runtime with the key.
    for (const item of items) {
      expect(item).toMatchObject({ projectId: project.projectId, appId: app.appId, key: app.key });
      expect(item?.sealedSecret).toBeDefined();
    }
  });
});

/** A fresh project (for tests that change its app). */
async function projectBeforeAllLike() {
  const created = await api('/platform/projects', {
    body: { name: 'pusher-rotate' },
    headers: { 'x-service-operator-key': runtime().operatorKey },
  });
  return created.body as { projectId: string; apiKey: string };
}

describe('POST /auth/channel', () => {
  const expectedAuth = (socketId: string, channel: string, channelData: string) =>
    `${app.key}:${hmacHex(app.secret, `${socketId}:${channel}:${channelData}`)}`;

  it.each(['private-room-', 'private-cache-room-'])('signs a form-encoded %s<roomId> auth as pusher-js posts it', async (prefix) => {
    // Prepare
    const { owner, roomId } = await room();
    const channel = `${prefix}${roomId}`;

    // Act
    const response = await api('/auth/channel', {
      token: owner.token,
      rawBody: new URLSearchParams({ socket_id: '1234.5678', channel_name: channel }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

    // Assess
    expect(response.status).toBe(200);
    const channelData = JSON.stringify({ user_id: owner.userId, user_info: {} });
    expect(response.body).toEqual({ auth: expectedAuth('1234.5678', channel, channelData), channel_data: channelData });
  });

  it('signs a presence channel with presenceInfo, as JSON and as a form field of JSON text', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const channel = `presence-room-${roomId}`;
    const presenceInfo = { name: 'Alice', color: 'teal' };

    // Act
    const asJson = await api('/auth/channel', { token: owner.token, body: { socket_id: '42.17', channel_name: channel, presenceInfo } });
    const asForm = await api('/auth/channel', {
      token: owner.token,
      rawBody: new URLSearchParams({ socket_id: '42.17', channel_name: channel, presenceInfo: JSON.stringify(presenceInfo) }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    });

    // Assess
    const channelData = JSON.stringify({ user_id: owner.userId, user_info: presenceInfo });
    const expected = { auth: expectedAuth('42.17', channel, channelData), channel_data: channelData };
    expect({ status: asJson.status, body: asJson.body }).toEqual({ status: 200, body: expected });
    expect({ status: asForm.status, body: asForm.body }).toEqual({ status: 200, body: expected });
  });

  it('refuses a non-member 403 not_a_member, a project admin who is not a member too', async () => {
    // Prepare
    const { roomId } = await room();
    const outsider = await user('outsider');
    const admin = await user('admin', ['admin']);

    // Act
    const answers = await Promise.all(
      [outsider, admin].map((caller) =>
        api('/auth/channel', { token: caller.token, body: { socket_id: '1.2', channel_name: `private-room-${roomId}` } }),
      ),
    );

    // Assess
    expect(answers.map((answer) => [answer.status, answer.body?.error?.code])).toEqual([
      [403, 'not_a_member'],
      [403, 'not_a_member'],
    ]);
  });

  it("answers 404 room_not_found for another project's room and a missing one", async () => {
    // Prepare
    const other = await projectBeforeAllLike();
    const otherOwner = await api('/auth/token', { apiKey: other.apiKey, body: { userId: uniqueId('b-owner') } });
    const otherRoom = uniqueId('room');
    await api('/rooms', { token: otherOwner.body.token, body: { id: otherRoom, type: 'group' } });
    const caller = await user('caller');

    // Act
    const answers = await Promise.all(
      [otherRoom, uniqueId('missing')].map((roomId) =>
        api('/auth/channel', { token: caller.token, body: { socket_id: '1.2', channel_name: `presence-room-${roomId}` } }),
      ),
    );

    // Assess
    expect(answers.map((answer) => [answer.status, answer.body?.error?.code])).toEqual([
      [404, 'room_not_found'],
      [404, 'room_not_found'],
    ]);
  });

  it.each([
    ['a socket id without its dot', { socket_id: '12345' }, 'invalid_socket_id'],
    ['a socket id of letters', { socket_id: 'abc.def' }, 'invalid_socket_id'],
    ['a public channel', { channel_name: 'my-channel' }, 'invalid_channel_name'],
    ['an encrypted channel', { channel_name: 'private-encrypted-room-x' }, 'invalid_channel_name'],
    ['a room channel with #', { channel_name: 'private-room-a#b' }, 'invalid_channel_name'],
  ])('answers 400 to %s', async (_label, change, code) => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const response = await api('/auth/channel', {
      token: owner.token,
      body: { socket_id: '1.2', channel_name: `private-room-${roomId}`, ...change },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code });
  });

  it('answers 409 pusher_app_not_configured in a project without an app', async () => {
    // Prepare
    const owner = await noApp.token(uniqueId('owner'));
    const roomId = uniqueId('room');
    await api('/rooms', { token: owner, body: { id: roomId, type: 'group' } });

    // Act
    const response = await api('/auth/channel', { token: owner, body: { socket_id: '1.2', channel_name: `private-room-${roomId}` } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 409, code: 'pusher_app_not_configured' });
  });
});

describe('the trigger API', () => {
  it('delivers an event the pusher package triggers to every room of its channels, data parsed', async () => {
    // Prepare
    const [first, second] = [await watchedRoom(), await watchedRoom()];

    // Act
    const response = await pusherOf(app).trigger(
      [`private-room-${first.roomId}`, `presence-cache-room-${second.roomId}`],
      'order.shipped',
      {
        orderId: 7,
      },
    );
    const frames = await Promise.all([first, second].map((target) => target.socket.next((frame) => frame.type === 'event')));

    // Assess
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    expect(frames).toEqual([
      { type: 'event', roomId: first.roomId, event: 'order.shipped', data: { orderId: 7 } },
      { type: 'event', roomId: second.roomId, event: 'order.shipped', data: { orderId: 7 } },
    ]);
  });

  it('delivers a batch, one event per channel, and answers one {} per event', async () => {
    // Prepare
    const [first, second] = [await watchedRoom(), await watchedRoom()];

    // Act
    const response = await pusherOf(app).triggerBatch([
      { channel: `private-room-${first.roomId}`, name: 'one', data: { n: 1 } },
      { channel: `private-room-${second.roomId}`, name: 'two', data: JSON.stringify({ n: 2 }) },
    ]);
    const frames = await Promise.all([first, second].map((target) => target.socket.next((frame) => frame.type === 'event')));

    // Assess
    expect(await response.json()).toEqual({ batch: [{}, {}] });
    expect(frames.map((frame) => [frame.event, frame.data])).toEqual([
      ['one', { n: 1 }],
      ['two', { n: 2 }],
    ]);
  });

  it('leaves out the socket named by socket_id', async () => {
    // Prepare
    const { owner, roomId, socket: origin } = await watchedRoom();
    const witness = await join(roomId, owner.token);

    // Act
    await pusherOf(app).trigger(`private-room-${roomId}`, 'not-to-origin', {}, { socket_id: pusherSocketIdOf(await origin.socketId()) });
    await witness.next((frame) => frame.type === 'event');
    await settle(origin);

    // Assess
    expect(origin.ofType('event')).toEqual([]);
  });

  describe('refuses, and delivers nothing', () => {
    const attempts: [string, (roomId: string) => Promise<{ status: number; body: any }>, number, string][] = [
      [
        'a tampered signature',
        (roomId) => signedTrigger(app, `/apps/${app.appId}/events`, eventBody(roomId), { tamper: true }),
        401,
        'invalid_pusher_signature',
      ],
      [
        'a timestamp 11 minutes old',
        (roomId) => signedTrigger(app, `/apps/${app.appId}/events`, eventBody(roomId), { timestamp: Math.floor(Date.now() / 1000) - 660 }),
        401,
        'invalid_pusher_signature',
      ],
      [
        'a body_md5 of another body',
        (roomId) =>
          signedTrigger(app, `/apps/${app.appId}/events`, eventBody(roomId), { md5: createHash('md5').update('{}').digest('hex') }),
        401,
        'invalid_pusher_signature',
      ],
      [
        'a key that is not the app’s',
        (roomId) => signedTrigger(app, `/apps/${app.appId}/events`, eventBody(roomId), { key: randomBytes(10).toString('hex') }),
        401,
        'invalid_pusher_signature',
      ],
      [
        'another secret',
        (roomId) => signedTrigger({ ...app, secret: randomBytes(32).toString('hex') }, `/apps/${app.appId}/events`, eventBody(roomId)),
        401,
        'invalid_pusher_signature',
      ],
      [
        'an unknown app id',
        (roomId) => signedTrigger({ ...app, appId: '999999999999999' }, '/apps/999999999999999/events', eventBody(roomId)),
        404,
        'pusher_app_not_found',
      ],
      [
        'a batch with a tampered signature',
        (roomId) =>
          signedTrigger(
            app,
            `/apps/${app.appId}/batch_events`,
            JSON.stringify({ batch: [{ name: 'x', channel: `private-room-${roomId}`, data: '{}' }] }),
            { tamper: true },
          ),
        401,
        'invalid_pusher_signature',
      ],
    ];

    it.each(attempts.map(([label, send, status, code]) => ({ label, send, status, code })))(
      '$label → $status $code',
      async ({ send, status, code }) => {
        // Prepare
        const { roomId, socket } = await watchedRoom();

        // Act
        const response = await send(roomId);
        await settle(socket);

        // Assess
        expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
        expect(socket.ofType('event')).toEqual([]);
      },
    );
  });

  it.each([
    ['data that is not JSON', { data: 'not json' }, 400, 'invalid_event_data'],
    ['data that is a JSON array', { data: '[1,2]' }, 400, 'invalid_event_data'],
    ['data over 10 KB', { data: JSON.stringify({ pad: 'x'.repeat(10 * 1024) }) }, 413, 'payload_too_large'],
    ['a channel that names no room', { channel: 'my-public-channel' }, 400, 'invalid_channel_name'],
    ['a name of 201 characters', { name: 'n'.repeat(201) }, 400, 'validation_failed'],
    ['a bad socket_id', { socket_id: 'nope' }, 400, 'invalid_socket_id'],
  ])('answers a signed event with %s %i %s, and delivers nothing', async (_label, change, status, code) => {
    // Prepare
    const { roomId, socket } = await watchedRoom();
    const body = JSON.stringify({ name: 'x', data: '{}', channel: `private-room-${roomId}`, ...change });

    // Act
    const response = await signedTrigger(app, `/apps/${app.appId}/events`, body);
    await settle(socket);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
    expect(socket.ofType('event')).toEqual([]);
  });

  it('sends nothing of a batch whose later event is bad', async () => {
    // Prepare
    const { roomId, socket } = await watchedRoom();
    const body = JSON.stringify({
      batch: [
        { name: 'good', channel: `private-room-${roomId}`, data: '{}' },
        { name: 'bad', channel: `private-room-${roomId}`, data: '"text"' },
      ],
    });

    // Act
    const response = await signedTrigger(app, `/apps/${app.appId}/batch_events`, body);
    await settle(socket);

    // Assess
    expect({ status: response.status, field: response.body?.error?.details?.[0]?.field }).toEqual({
      status: 400,
      field: 'body.batch.1.data',
    });
    expect(socket.ofType('event')).toEqual([]);
  });
});

const eventBody = (roomId: string) => JSON.stringify({ name: 'refused', data: '{}', channel: `private-room-${roomId}` });
