import { describe, expect, it } from 'vitest';
import { api, createTestProject, ISO_TIMESTAMP, uniqueId } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';
import { projectBeforeAll, realtimeSuite, settle } from '../support/realtime-suite';
import { connectUser, connectWelcomed } from '../support/ws';

/**
 * Server events: `POST /events` to rooms (every connection but `excludeSocketId` / `socket_id`,
 * rooms the caller may not post to `skipped`) and `POST /users/{userId}/events` to a user's
 * user-channel connections (`notification` frames, `user.event` webhook events).
 */

const { project, track, join, user, room } = realtimeSuite('realtime-server-events');
const other = projectBeforeAll('realtime-server-events-b');

describe('POST /events', () => {
  it('reaches every connection of the room but excludeSocketId, naming the sending user', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner: alice, roomId } = await room('group', [bob.userId]);
    const [origin, aliceOther, bobSocket] = [
      await join(roomId, alice.token),
      await join(roomId, alice.token),
      await join(roomId, bob.token),
    ];
    const excluded = await origin.socketId();

    // Act
    const response = await api('/events', {
      token: alice.token,
      body: { roomIds: [roomId], name: 'order.shipped', data: { orderId: 7 }, excludeSocketId: excluded },
    });
    const toBob = await bobSocket.next((frame) => frame.type === 'event');
    const toOther = await aliceOther.next((frame) => frame.type === 'event');
    await settle(origin);

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: [roomId], skipped: [] } });
    const expected = { type: 'event', roomId, event: 'order.shipped', data: { orderId: 7 }, userId: alice.userId };
    expect(toBob).toEqual(expected);
    expect(toOther).toEqual(expected);
    expect(origin.ofType('event')).toEqual([]);
  });

  it('accepts socket_id as an alias of excludeSocketId', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const [origin, witness] = [await join(roomId, owner.token), await join(roomId, owner.token)];

    // Act
    const response = await api('/events', {
      token: owner.token,
      body: { roomIds: [roomId], name: 'pusher-style', socket_id: await origin.socketId() },
    });
    const delivered = await witness.next((frame) => frame.type === 'event');
    await settle(origin);

    // Assess
    expect(response.status).toBe(202);
    expect(delivered).toEqual({ type: 'event', roomId, event: 'pusher-style', data: {}, userId: owner.userId });
    expect(origin.ofType('event')).toEqual([]);
  });

  it('carries data whose keys are named like Object members (constructor) intact, rather than failing to store them', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const witness = await join(roomId, owner.token);
    const data = { constructor: 'x', nested: { constructor: { deep: true } }, list: [{ constructor: 1 }] };

    // Act
    const response = await api('/events', { token: owner.token, body: { roomIds: [roomId], name: 'odd-keys', data } });
    const delivered = await witness.next((frame) => frame.type === 'event');

    // Assess
    expect(response.status).toBe(202);
    expect(delivered).toEqual({ type: 'event', roomId, event: 'odd-keys', data, userId: owner.userId });
  });

  it('refuses data with an empty key at any depth (DynamoDB stores no such map) with 400 naming body.data', async () => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const response = await api('/events', { token: owner.token, body: { roomIds: [roomId], name: 'empty-key', data: { a: [{ '': 1 }] } } });

    // Assess
    expect(response).toMatchObject({
      status: 400,
      body: {
        error: { code: 'validation_failed', details: [{ field: 'body.data', message: 'must not have an empty key, at any depth' }] },
      },
    });
  });

  it('reaches every connection, sender included, without excludeSocketId; an API key event names no user', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);

    // Act
    const response = await api('/events', { apiKey: project.apiKey, body: { roomIds: [roomId], name: 'deploy', data: { v: 2 } } });
    const delivered = await socket.next((frame) => frame.type === 'event');

    // Assess
    expect(response.body).toEqual({ sent: [roomId], skipped: [] });
    expect(delivered).toEqual({ type: 'event', roomId, event: 'deploy', data: { v: 2 } });
  });

  it("skips rooms the caller may not post to, rooms that do not exist and other tenants' rooms, and sends to the rest", async () => {
    // Prepare
    const alice = await user('alice');
    const own = await room('group', [], alice);
    const publicRoom = await room('public');
    const privateRoom = await room('group');
    const missing = uniqueId('missing');
    const foreign = uniqueId('foreign');
    const foreignOwner = await other.token(alice.userId);
    await api('/rooms', { token: foreignOwner, body: { id: foreign, type: 'group' } });
    const [ownSocket, publicSocket, privateSocket, foreignSocket] = [
      await join(own.roomId, alice.token),
      await join(publicRoom.roomId, publicRoom.owner.token),
      await join(privateRoom.roomId, privateRoom.owner.token),
      track(await connectWelcomed(foreign, foreignOwner, { history: 0 })),
    ];

    // Act
    const response = await api('/events', {
      token: alice.token,
      body: { roomIds: [privateRoom.roomId, own.roomId, missing, publicRoom.roomId, foreign], name: 'broadcast' },
    });
    await ownSocket.next((frame) => frame.type === 'event');
    await publicSocket.next((frame) => frame.type === 'event');
    await settle(privateSocket);
    await settle(foreignSocket);

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({
      status: 202,
      body: { sent: [own.roomId, publicRoom.roomId], skipped: [privateRoom.roomId, missing, foreign] },
    });
    expect(privateSocket.ofType('event')).toEqual([]);
    expect(foreignSocket.ofType('event')).toEqual([]);
    const replay = track(await connectWelcomed(privateRoom.roomId, privateRoom.owner.token, { cache: true, history: 0 }));
    expect(replay.ofType('cache_miss')).toHaveLength(1);
  });

  it('lets a project admin post to a group room they are not a member of', async () => {
    // Prepare
    const admin = await user('admin', ['admin']);
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);

    // Act
    const response = await api('/events', { token: admin.token, body: { roomIds: [roomId], name: 'maintenance' } });
    const delivered = await socket.next((frame) => frame.type === 'event');

    // Assess
    expect(response.body).toEqual({ sent: [roomId], skipped: [] });
    expect(delivered).toMatchObject({ event: 'maintenance', userId: admin.userId });
  });

  const roomIds = (count: number) => Array.from({ length: count }, (_, i) => `r-${i}`);
  it.each([
    { variant: 'a client- name', body: { roomIds: ['r'], name: 'client-typing' }, field: 'body.name' },
    { variant: 'a name of 65 characters', body: { roomIds: ['r'], name: 'n'.repeat(65) }, field: 'body.name' },
    { variant: 'a name with a space', body: { roomIds: ['r'], name: 'a b' }, field: 'body.name' },
    { variant: 'an empty name', body: { roomIds: ['r'], name: '' }, field: 'body.name' },
    { variant: 'data over 10 KB', body: { roomIds: ['r'], name: 'big', data: { blob: 'x'.repeat(10 * 1024) } }, field: 'body.data' },
    { variant: 'data that is an array', body: { roomIds: ['r'], name: 'arr', data: [1] }, field: 'body.data' },
    { variant: 'more than 10 rooms', body: { roomIds: roomIds(11), name: 'many' }, field: 'body.roomIds' },
    { variant: 'no room', body: { roomIds: [], name: 'none' }, field: 'body.roomIds' },
    { variant: 'a bad room id', body: { roomIds: ['a#b'], name: 'bad' }, field: 'body.roomIds.0' },
    { variant: 'an empty excludeSocketId', body: { roomIds: ['r'], name: 'x', excludeSocketId: '' }, field: 'body.excludeSocketId' },
  ])('answers 400 naming $field to $variant', async ({ body, field }) => {
    // Act
    const response = await api('/events', { apiKey: project.apiKey, body });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field }));
  });

  it('accepts exactly 10 rooms and data of 10 KB', async () => {
    // Prepare
    const data = { blob: 'x'.repeat(10 * 1024 - '{"blob":""}'.length) };

    // Act
    const response = await api('/events', { apiKey: project.apiKey, body: { roomIds: roomIds(10), name: 'edge', data } });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: [], skipped: roomIds(10) } });
  });
});

describe('POST /users/{userId}/events', () => {
  it.each([
    { caller: 'the user', auth: (self: string) => ({ token: self }) },
    { caller: 'an admin', auth: async () => ({ token: (await user('admin', ['admin'])).token }) },
    { caller: 'the API key', auth: async () => ({ apiKey: project.apiKey }) },
  ])('from $caller pushes a notification to every user-channel connection of the user', async ({ auth }) => {
    // Prepare
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId]);
    const channels = [track(await connectUser(bob.userId, bob.token)), track(await connectUser(bob.userId, bob.token))];
    const roomSocket = await join(roomId, bob.token);

    // Act
    const response = await api(`/users/${bob.userId}/events`, {
      ...(await auth(bob.token)),
      body: { name: 'invoice.paid', data: { amount: 12 } },
    });
    const notifications = await Promise.all(channels.map((socket) => socket.next((frame) => frame.type === 'notification')));
    await settle(roomSocket);

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: 2 } });
    for (const notification of notifications) {
      expect(notification).toEqual({
        type: 'notification',
        event: 'invoice.paid',
        data: { amount: 12 },
        at: expect.stringMatching(ISO_TIMESTAMP),
      });
    }
    expect(roomSocket.ofType('notification')).toEqual([]);
  });

  it.each([
    { caller: 'another member', roles: undefined },
    { caller: 'a moderator', roles: ['moderator'] },
  ])('is refused with 403 forbidden for $caller and reaches no one', async ({ roles }) => {
    // Prepare
    const bob = await user('bob');
    const mallory = await user('mallory', roles);
    const channel = track(await connectUser(bob.userId, bob.token));

    // Act
    const response = await api(`/users/${bob.userId}/events`, { token: mallory.token, body: { name: 'phish', data: {} } });
    await settle(channel);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect(channel.ofType('notification')).toEqual([]);
  });

  it('answers sent 0 for a user without user-channel connections', async () => {
    // Act
    const response = await api(`/users/${uniqueId('nobody')}/events`, { apiKey: project.apiKey, body: { name: 'hello' } });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: 0 } });
  });

  it('is published as user.event when a webhook subscribes', async () => {
    // Prepare
    const own = await createTestProject('realtime-user-event-hook');
    await api('/webhooks/register', {
      apiKey: own.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['user.event'] },
    });
    const carol = uniqueId('carol');

    // Act
    await api(`/users/${carol}/events`, { apiKey: own.apiKey, body: { name: 'badge.earned', data: { badge: 'gold' } } });
    const events = await collectEvents(eventsOf(own.projectId), { count: 1, settleMs: 500 });

    // Assess
    expect(events).toEqual([
      expect.objectContaining({
        type: 'user.event',
        projectId: own.projectId,
        payload: { userId: carol, event: 'badge.earned', data: { badge: 'gold' } },
      }),
    ]);
  });
});
