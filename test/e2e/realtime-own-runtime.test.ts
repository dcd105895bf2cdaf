import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, ISO_TIMESTAMP } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { realtimeHelpers, settle } from '../support/realtime-suite';
import { connectUser, type RoomSocket, type SocketOptions, tryConnect } from '../support/ws';

/**
 * Realtime behaviour that needs settings or consumers the shared runtime does not have, on one
 * runtime of its own (`bin/local.ts`, all queue consumers on): the public-room connection rate
 * limit, fan-out of large rooms through the realtime queue (threshold 3, batches of 2), and
 * watched-room activity, which the watcher subscriber delivers. Its handlers reach `@connections`
 * the way they do on AWS, through the SDK over HTTP with SigV4 (`LOCAL_CONNECTIONS_TRANSPORT=http`),
 * so the SDK's requests and its error mapping (410 → `GoneException` while a handshake finishes)
 * stay tested; every other suite uses the direct transport.
 */

const OPERATOR_KEY = 'realtime-own-runtime-operator-key-01';
const PUBLIC_CONNECTIONS_PER_MINUTE = 2;

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let ws: SocketOptions;
let apiKey: string;

beforeAll(async () => {
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
      RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE: String(PUBLIC_CONNECTIONS_PER_MINUTE),
      REALTIME_FANOUT_QUEUE_THRESHOLD: '3',
      REALTIME_FANOUT_BATCH_SIZE: '2',
      LOCAL_CONNECTIONS_TRANSPORT: 'http',
    },
  });
  call = clientOf(local.baseUrl);
  ws = { wsUrl: local.baseUrl.replace(/^http/, 'ws') };
  const created = await call('/platform/projects', { body: { name: 'realtime-own' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
  if (created.status !== 201) throw new Error(`project creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  apiKey = created.body.apiKey;
}, 60_000);
afterAll(async () => {
  await local?.stop();
});

const { track, user, room, join } = realtimeHelpers({ token: issueToken }, () => ({ call, ws }));

/** A token of the project on this runtime. */
async function issueToken(userId: string, roles?: string[]) {
  const issued = await call('/auth/token', { apiKey, body: { userId, ...(roles ? { roles } : {}) } });
  if (issued.status !== 201) throw new Error(`token failed: ${issued.status}`);
  return issued.body.token as string;
}

/** The rate limit counts fixed minutes: start a burst of connects well inside one. */
async function insideOneMinute(needMs = 5000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE', () => {
  it("refuses a user's connection to a public room past the limit with 429 rate_limited; group rooms and other users are not counted", async () => {
    // Prepare
    const { roomId } = await room('public');
    const group = await room('group');
    const visitor = await user('visitor');
    const other = await user('other');
    await insideOneMinute();

    // Act
    const admitted = [];
    for (let i = 0; i < PUBLIC_CONNECTIONS_PER_MINUTE; i++) admitted.push(await tryConnect(roomId, visitor.token, ws));
    const refused = await tryConnect(roomId, visitor.token, ws);
    const groupOwner = [await tryConnect(group.roomId, group.owner.token, ws), await tryConnect(group.roomId, group.owner.token, ws)];
    const groupThird = await tryConnect(group.roomId, group.owner.token, ws);
    const otherUser = await tryConnect(roomId, other.token, ws);

    // Assess
    for (const handshake of [...admitted, ...groupOwner, groupThird, otherUser]) {
      if (handshake.open) track(handshake.socket);
    }
    expect(admitted.map((handshake) => handshake.open)).toEqual([true, true]);
    expect(refused).toMatchObject({ open: false, status: 429, body: { error: { code: 'rate_limited' } } });
    expect([groupThird.open, otherUser.open]).toEqual([true, true]);
  });

  it('says when to retry on the 429 refusal: a Retry-After header, as every 429 of the service', async () => {
    // Prepare
    const { roomId } = await room('public');
    const visitor = await user('visitor');
    await insideOneMinute();
    for (let i = 0; i < PUBLIC_CONNECTIONS_PER_MINUTE; i++) {
      const handshake = await tryConnect(roomId, visitor.token, ws);
      if (handshake.open) track(handshake.socket);
    }

    // Act
    const refused = await tryConnect(roomId, visitor.token, ws);

    // Assess
    expect(refused.open).toBe(false);
    if (refused.open) return;
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter, `Retry-After header: ${refused.headers['retry-after']}`).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });
});

describe('a room past REALTIME_FANOUT_QUEUE_THRESHOLD', () => {
  const queuedMessages = async () => ((await call('/_local/stats')).body.queueConsumers.messages as number) ?? 0;

  it('gets a REST message on each of its 6 connections exactly once, through the realtime queue', async () => {
    // Prepare
    const members = await Promise.all([user('m1'), user('m2')]);
    const { owner, roomId } = await room(
      'group',
      members.map((member) => member.userId),
    );
    const sockets = [];
    for (const person of [owner, owner, ...members, ...members]) sockets.push(await join(roomId, person.token));
    const before = await queuedMessages();

    // Act
    const posted = await call('/messages', { token: owner.token, body: { roomId, content: 'to the crowd' } });
    await Promise.all(sockets.map((socket) => socket.next((frame) => frame.message?.id === posted.body.id)));
    await Promise.all(sockets.map((socket) => settle(socket)));

    // Assess
    expect(posted.status).toBe(201);
    for (const socket of sockets) {
      expect(socket.ofType('message').filter((frame) => frame.message.id === posted.body.id)).toEqual([
        { type: 'message', message: posted.body },
      ]);
    }
    // 6 connections in batches of 2: three fan-out jobs (plus the message.created event) went through the queues.
    expect((await queuedMessages()) - before).toBeGreaterThanOrEqual(3);
  });

  it('gets a WebSocket message on the 5 other connections exactly once and acks the sender', async () => {
    // Prepare
    const { owner, roomId } = await room('group');
    const sockets = [];
    for (let i = 0; i < 6; i++) sockets.push(await join(roomId, owner.token));
    const [sender, ...others] = sockets as [RoomSocket, ...RoomSocket[]];

    // Act
    sender.send({ type: 'message', content: 'from inside', clientMessageId: 'crowd-1' });
    const ack = await sender.next((frame) => frame.type === 'ack');
    await Promise.all(others.map((socket) => socket.next((frame) => frame.message?.id === ack.message.id)));
    await Promise.all(sockets.map((socket) => settle(socket)));

    // Assess
    for (const socket of others) expect(socket.ofType('message')).toEqual([{ type: 'message', message: ack.message }]);
    expect(sender.ofType('message')).toEqual([]);
  });
});

describe('a watched room', () => {
  it("reports each new message as watchlist_event on the watchers' user channels, not to its author nor to a watcher who left", async () => {
    // Prepare
    const [alice, bob, carol] = await Promise.all([user('alice'), user('bob'), user('carol')]);
    const { owner, roomId } = await room('group', [alice.userId, bob.userId, carol.userId]);
    for (const watcher of [alice, bob, carol]) {
      const added = await call(`/users/${watcher.userId}/watchlist`, { token: watcher.token, body: { type: 'room', targetId: roomId } });
      expect(added.status).toBe(201);
    }
    await call(`/rooms/${roomId}/members/${carol.userId}`, { token: owner.token, method: 'DELETE' });
    const channels = [];
    for (const person of [alice, bob, carol]) {
      const channel = await connectUser(person.userId, person.token, ws);
      track(channel);
      channels.push(channel);
    }
    const [aliceChannel, bobChannel, carolChannel] = channels as [RoomSocket, RoomSocket, RoomSocket];

    // Act
    const posted = await call('/messages', { token: bob.token, body: { roomId, content: 'anyone watching?' } });
    const activity = await aliceChannel.next((frame) => frame.type === 'watchlist_event', 10_000);
    const marker = await call(`/users/${bob.userId}/events`, { apiKey, body: { name: 'marker' } });
    await bobChannel.next((frame) => frame.type === 'notification');
    await call(`/users/${carol.userId}/events`, { apiKey, body: { name: 'marker' } });
    await carolChannel.next((frame) => frame.type === 'notification');

    // Assess
    expect(posted.status).toBe(201);
    expect(marker.status).toBe(202);
    expect(activity).toEqual({
      type: 'watchlist_event',
      target: { type: 'room', targetId: roomId },
      activity: 'message',
      roomId,
      message: { id: posted.body.id, userId: bob.userId, content: 'anyone watching?', createdAt: posted.body.createdAt },
      at: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(bobChannel.ofType('watchlist_event')).toEqual([]);
    expect(carolChannel.ofType('watchlist_event')).toEqual([]);
  });

  it('reports messages of a public room to a watcher who never joined it', async () => {
    // Prepare
    const { owner, roomId } = await room('public');
    const dave = await user('dave');
    expect((await call(`/users/${dave.userId}/watchlist`, { token: dave.token, body: { type: 'room', targetId: roomId } })).status).toBe(
      201,
    );
    const channel = await connectUser(dave.userId, dave.token, ws);
    track(channel);

    // Act
    const posted = await call('/messages', { token: owner.token, body: { roomId, content: 'open to all' } });
    const activity = await channel.next((frame) => frame.type === 'watchlist_event', 10_000);

    // Assess
    expect(activity).toMatchObject({ activity: 'message', roomId, message: { id: posted.body.id, content: 'open to all' } });
  });
});

describe('DELETE /users/{userId}/connections over the HTTP management API', () => {
  it("closes each of the user's sockets through DeleteConnection and answers how many", async () => {
    // Prepare
    const { owner, roomId } = await room('group');
    const first = await join(roomId, owner.token);
    const second = await join(roomId, owner.token);
    await Promise.all([first.socketId(), second.socketId()]);

    // Act
    const closed = await call(`/users/${owner.userId}/connections`, { method: 'DELETE', apiKey });

    // Assess
    expect(closed).toMatchObject({ status: 200, body: { closed: 2 } });
    expect((await first.closed).code).toBe(1000);
    expect((await second.closed).code).toBe(1000);
  });
});

describe('ping frames', () => {
  it('are answered pong by the gateway itself, as the MOCK route does on AWS: no function runs, nothing is posted', async () => {
    // Prepare
    const { owner, roomId } = await room('group');
    const socket = await join(roomId, owner.token);
    await socket.next((frame) => frame.type === 'subscription_succeeded');
    await settle(socket);
    const postsBefore = (await call('/_local/stats')).body.connections.posts as number;
    const pongsBefore = socket.ofType('pong').length;

    // Act
    for (let ping = 0; ping < 5; ping++) socket.send({ type: 'ping' });
    await socket.next(() => socket.ofType('pong').length === pongsBefore + 5);

    // Assess
    expect(socket.ofType('pong').slice(pongsBefore)).toEqual(Array.from({ length: 5 }, () => ({ type: 'pong' })));
    expect((await call('/_local/stats')).body.connections.posts).toBe(postsBefore);
  });
});
