import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { api, createTestProject, ISO_TIMESTAMP, newUser, type TestProject, uniqueId } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';
import { get, raw, table } from '../support/raw-table';
import { realtimeSuite } from '../support/realtime-suite';
import { connect, connectWelcomed, type Frame, type RoomSocket } from '../support/ws';

/**
 * Presence over real sockets: member_joined for a user's first connection only, member_left for
 * the last only, presence lists, subscription_count on every connect and disconnect, the
 * subscription_succeeded snapshot; and the room events webhooks may subscribe to (room.occupied,
 * room.vacated, member_joined, member_left, subscription_count, cache_miss) through the event topic (a tap of the test's own).
 */

const { project, track, join } = realtimeSuite('realtime-presence');

const PRESENCE_TYPES = ['member_joined', 'member_left', 'presence', 'subscription_count'];
const presenceFrames = (socket: RoomSocket) => socket.ofType(...PRESENCE_TYPES);
/** Waits until `socket` has received `count` frames of `type`. */
const nth = (socket: RoomSocket, type: string, count: number) => socket.next(() => socket.ofType(type).length >= count);

async function groupRoom(projectOf: TestProject, prefixes: string[]) {
  const people = await Promise.all(prefixes.map((prefix) => newUser(projectOf, prefix)));
  const [owner, ...others] = people as [Awaited<ReturnType<typeof newUser>>, ...Awaited<ReturnType<typeof newUser>>[]];
  const roomId = uniqueId('room');
  const created = await api('/rooms', { token: owner.token, body: { id: roomId, type: 'group', members: others.map((p) => p.userId) } });
  expect(created.status).toBe(201);
  return { roomId, people };
}

describe('presence counters that drifted', () => {
  it('heal on the next arrival: a ghost connection counted in but never out does not hide the join, nor the leave after it', async () => {
    // Prepare: bob is counted in the room once already, as if a socket of his had vanished
    // without any $disconnect and expired by TTL.
    const { roomId, people } = await groupRoom(project, ['alice', 'bob']);
    const [alice, bob] = people as [(typeof people)[number], (typeof people)[number]];
    const watcher = await join(roomId, alice.token);
    const counterKey = { pk: `P#${project.projectId}#R#${roomId}#CONNS`, sk: `N#U#${bob.userId}` };
    await raw.send(
      new PutCommand({ TableName: table(), Item: { ...counterKey, connections: 1, ttl: Math.floor(Date.now() / 1000) + 3600 } }),
    );

    // Act
    const bobSocket = await connectWelcomed(roomId, bob.token);
    const joined = await watcher.next((frame) => frame.type === 'member_joined' && frame.userId === bob.userId);
    await bobSocket.close();
    const left = await watcher.next((frame) => frame.type === 'member_left' && frame.userId === bob.userId);

    // Assess
    expect(joined).toMatchObject({ roomId, userId: bob.userId });
    expect(left).toMatchObject({ roomId, userId: bob.userId });
    expect(await get(counterKey.pk, counterKey.sk)).toMatchObject({ connections: 0 });
  });
});

describe('presence frames', () => {
  it('announce a user once however many connections they open, and their leaving only with the last one', async () => {
    // Prepare
    const { roomId, people } = await groupRoom(project, ['alice', 'bob']);
    const [alice, bob] = people as [(typeof people)[number], (typeof people)[number]];
    const watcher = await join(roomId, alice.token);

    // Act
    const bob1 = await join(roomId, bob.token);
    await nth(watcher, 'subscription_count', 1);
    const bob2 = await join(roomId, bob.token);
    await nth(watcher, 'subscription_count', 2);
    await bob2.close();
    await nth(watcher, 'subscription_count', 3);
    await nth(bob1, 'subscription_count', 2);
    await bob1.close();
    await nth(watcher, 'subscription_count', 4);

    // Assess
    const both = [alice.userId, bob.userId].sort();
    expect(presenceFrames(watcher)).toEqual([
      { type: 'member_joined', roomId, userId: bob.userId, subscriptionCount: 2 },
      { type: 'presence', roomId, members: both, subscriptionCount: 2 },
      { type: 'subscription_count', roomId, subscriptionCount: 2 },
      { type: 'subscription_count', roomId, subscriptionCount: 3 },
      { type: 'subscription_count', roomId, subscriptionCount: 2 },
      { type: 'member_left', roomId, userId: bob.userId, subscriptionCount: 1 },
      { type: 'presence', roomId, members: [alice.userId], subscriptionCount: 1 },
      { type: 'subscription_count', roomId, subscriptionCount: 1 },
    ]);
    expect(presenceFrames(bob1)).toEqual([
      { type: 'subscription_count', roomId, subscriptionCount: 3 },
      { type: 'subscription_count', roomId, subscriptionCount: 2 },
    ]);
    expect(bob1.ofType('subscription_succeeded')).toEqual([
      { type: 'subscription_succeeded', roomId, members: both, subscriptionCount: 2 },
    ]);
    expect(bob2.ofType('subscription_succeeded')).toEqual([
      { type: 'subscription_succeeded', roomId, members: both, subscriptionCount: 3 },
    ]);
    expect(presenceFrames(bob2)).toEqual([]);
  });

  it('keep the member list of several users in step as they come and go', async () => {
    // Prepare
    const { roomId, people } = await groupRoom(project, ['alice', 'bob', 'carol']);
    const [alice, bob, carol] = people as [(typeof people)[number], (typeof people)[number], (typeof people)[number]];
    const aliceSocket = await join(roomId, alice.token);

    // Act
    const bobSocket = await join(roomId, bob.token);
    await nth(aliceSocket, 'presence', 1);
    const carolSocket = await join(roomId, carol.token);
    await nth(aliceSocket, 'presence', 2);
    await nth(bobSocket, 'presence', 1);
    await bobSocket.close();
    await nth(aliceSocket, 'presence', 3);
    await nth(carolSocket, 'presence', 1);

    // Assess
    const lists = (socket: RoomSocket) => socket.ofType('presence').map((frame) => [frame.members, frame.subscriptionCount]);
    expect(lists(aliceSocket)).toEqual([
      [[alice.userId, bob.userId].sort(), 2],
      [[alice.userId, bob.userId, carol.userId].sort(), 3],
      [[alice.userId, carol.userId].sort(), 2],
    ]);
    expect(lists(carolSocket)).toEqual([[[alice.userId, carol.userId].sort(), 2]]);
    expect(carolSocket.ofType('subscription_succeeded')[0]).toEqual({
      type: 'subscription_succeeded',
      roomId,
      members: [alice.userId, bob.userId, carol.userId].sort(),
      subscriptionCount: 3,
    });
    expect(aliceSocket.ofType('member_joined').map((frame: Frame) => frame.userId)).toEqual([bob.userId, carol.userId]);
    expect(carolSocket.ofType('member_left')).toEqual([{ type: 'member_left', roomId, userId: bob.userId, subscriptionCount: 2 }]);
  });

  it("are not sent to the arriving connection itself, and never cross into another room's connections", async () => {
    // Prepare
    const { roomId, people } = await groupRoom(project, ['alice', 'bob']);
    const elsewhere = await groupRoom(project, ['dave']);
    const [alice, bob] = people as [(typeof people)[number], (typeof people)[number]];
    const daveSocket = await join(elsewhere.roomId, (elsewhere.people[0] as (typeof people)[number]).token);
    const aliceSocket = await join(roomId, alice.token);

    // Act
    const bobSocket = await join(roomId, bob.token);
    await nth(aliceSocket, 'subscription_count', 1);
    daveSocket.send({ type: 'ping' });
    await daveSocket.next((frame) => frame.type === 'pong');

    // Assess
    expect(presenceFrames(bobSocket)).toEqual([]);
    expect(presenceFrames(daveSocket)).toEqual([]);
  });
});

describe('room events on the event topic', () => {
  const REALTIME_TYPES = ['room.occupied', 'room.vacated', 'member_joined', 'member_left', 'subscription_count', 'cache_miss'];

  async function projectWithWebhook(eventTypes: string[]) {
    const own = await createTestProject('realtime-events');
    const registered = await api('/webhooks/register', {
      apiKey: own.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes },
    });
    expect(registered.status).toBe(201);
    return own;
  }

  it('follow the first and last connection of the room and of each user, with the spec payloads', async () => {
    // Prepare
    const own = await projectWithWebhook(REALTIME_TYPES);
    const { roomId, people } = await groupRoom(own, ['alice']);
    const alice = people[0] as (typeof people)[number];
    const at = expect.stringMatching(ISO_TIMESTAMP);

    // Act: two connections of one user, closed one after the other
    const first = await connectWelcomed(roomId, alice.token, { cache: true, history: 0 });
    track(first);
    const opened = await collectEvents(eventsOf(own.projectId), { count: 4 });
    const second = await connectWelcomed(roomId, alice.token, { history: 0 });
    track(second);
    await nth(first, 'subscription_count', 1);
    const secondOpened = await collectEvents(eventsOf(own.projectId), { count: 1 });
    await second.close();
    await nth(first, 'subscription_count', 2);
    const secondClosed = await collectEvents(eventsOf(own.projectId), { count: 1 });
    await first.close();
    const closed = await collectEvents(eventsOf(own.projectId), { count: 3, settleMs: 500 });

    // Assess
    const payloads = (events: { type: string; payload: unknown }[]) =>
      events.map(({ type, payload }) => ({ type, payload })).sort((a, b) => a.type.localeCompare(b.type));
    expect(payloads(opened)).toEqual([
      { type: 'cache_miss', payload: { roomId, at } },
      { type: 'member_joined', payload: { roomId, userId: alice.userId, subscriptionCount: 1 } },
      { type: 'room.occupied', payload: { roomId, at } },
      { type: 'subscription_count', payload: { roomId, subscriptionCount: 1 } },
    ]);
    expect(payloads(secondOpened)).toEqual([{ type: 'subscription_count', payload: { roomId, subscriptionCount: 2 } }]);
    expect(payloads(secondClosed)).toEqual([{ type: 'subscription_count', payload: { roomId, subscriptionCount: 1 } }]);
    expect(payloads(closed)).toEqual([
      { type: 'member_left', payload: { roomId, userId: alice.userId, subscriptionCount: 0 } },
      { type: 'room.vacated', payload: { roomId, at } },
      { type: 'subscription_count', payload: { roomId, subscriptionCount: 0 } },
    ]);
    for (const event of [...opened, ...closed]) expect(event).toMatchObject({ projectId: own.projectId, createdAt: at });
  });

  it('are published only for the types some webhook of the project subscribes to', async () => {
    // Prepare
    const own = await projectWithWebhook(['room.occupied']);
    const { roomId, people } = await groupRoom(own, ['alice']);
    const alice = people[0] as (typeof people)[number];

    // Act
    const socket = await connect(roomId, alice.token, { cache: true });
    track(socket);
    await socket.next((frame) => frame.type === 'cache_miss');
    await socket.close();
    const events = await collectEvents(eventsOf(own.projectId), { count: 1, settleMs: 1000 });

    // Assess
    expect(events.map((event) => event.type)).toEqual(['room.occupied']);
  });
});
