import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { registerConnection } from '#domain/realtime/connections';
import { type ApiOptions, api, uniqueId } from '../support/api';
import { get, partition, raw, roomListEntry, table } from '../support/raw-table';
import { realtimeSuite, settle } from '../support/realtime-suite';
import { eventually } from '../support/webhook-receiver';
import { type CloseInfo, connectUser, type Frame, type RoomSocket } from '../support/ws';

/**
 * Connection records over a connection's life: `$disconnect` removes them, a record whose socket is
 * gone is removed on the next broadcast that meets API Gateway's 410, and
 * `DELETE /users/{userId}/connections` closes every room and user-channel socket of one user.
 */

const { project, track, join, user, room } = realtimeSuite('realtime-connections');

/** The three records of a connection: by id, in its room's list, under its user. */
const recordsOf = async (connectionId: string, roomId: string, userId: string) => ({
  byId: await get(`CONN#${connectionId}`, 'CONN'),
  byRoom: await roomListEntry(project.projectId, roomId, connectionId),
  byUser: await get(`P#${project.projectId}#U#${userId}#CONNS`, `C#${connectionId}`),
});
const liveConnectionsOf = async (userId: string) =>
  (await partition(`P#${project.projectId}#U#${userId}#CONNS`)).filter((item) => String(item.sk).startsWith('C#'));

/** Resolves with how the socket was closed, or rejects when it stays open. */
const closedWithin = (socket: RoomSocket, timeoutMs = 5000) =>
  Promise.race([
    socket.closed,
    new Promise<CloseInfo>((_, reject) => setTimeout(() => reject(new Error('the socket is still open')), timeoutMs)),
  ]);

describe('connection records', () => {
  it('are stored on connect and removed by $disconnect', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);
    const connectionId = await socket.socketId();
    const stored = await recordsOf(connectionId, roomId, owner.userId);

    // Act
    await socket.close();

    // Assess
    expect(stored.byId).toMatchObject({ connectionId, projectId: project.projectId, roomId, userId: owner.userId, channel: 'room' });
    expect(stored.byRoom).toMatchObject({ connectionId, userId: owner.userId });
    expect(stored.byUser).toMatchObject({ connectionId, roomId });
    await eventually('the records to be removed', async () => {
      const records = await recordsOf(connectionId, roomId, owner.userId);
      return !records.byId && !records.byRoom && !records.byUser;
    });
  });

  it('of a socket that no longer exists are removed by the next broadcast (410), and the room hears the user left', async () => {
    // Prepare
    const { owner, roomId } = await room('group', ['ghost']);
    const socket = await join(roomId, owner.token);
    const ghostId = `ghost-${uniqueId('c')}`;
    await registerConnection({
      projectId: project.projectId,
      channel: 'room',
      roomId,
      userId: 'ghost',
      roles: ['member'],
      connectionId: ghostId,
    });
    // Its socket went away long ago (a lost $disconnect), not a moment ago.
    await raw.send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `CONN#${ghostId}`, sk: 'CONN' },
        UpdateExpression: 'SET connectedAt = :then',
        ExpressionAttributeValues: { ':then': new Date(Date.now() - 30 * 60_000).toISOString() },
      }),
    );
    expect((await recordsOf(ghostId, roomId, 'ghost')).byRoom).toBeDefined();

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'who is there?' } });
    await socket.next((frame) => frame.message?.id === posted.body.id);

    // Assess
    expect(await recordsOf(ghostId, roomId, 'ghost')).toEqual({ byId: undefined, byRoom: undefined, byUser: undefined });
    const left = await socket.next((frame) => frame.type === 'member_left');
    expect(left).toEqual({ type: 'member_left', roomId, userId: 'ghost', subscriptionCount: 1 });
    expect(await socket.next((frame) => frame.type === 'presence')).toEqual({
      type: 'presence',
      roomId,
      members: [owner.userId],
      subscriptionCount: 1,
    });
  });
  it('of connections opened while the room is busy survive the broadcasts that race their handshake', async () => {
    // Prepare: a room whose server events keep coming, as in a busy room
    const { owner, roomId } = await room();
    const witness = await join(roomId, owner.token);
    let busy = true;
    const broadcastLoop = async () => {
      while (busy) await api('/events', { apiKey: project.apiKey, body: { roomIds: [roomId], name: 'tick' } });
    };
    const loops = [broadcastLoop(), broadcastLoop(), broadcastLoop()];

    // Act: connections open one after the other while the events flow, then one message is sent
    const newcomers: RoomSocket[] = [];
    try {
      for (let i = 0; i < 10; i++) newcomers.push(await join(roomId, owner.token));
    } finally {
      busy = false;
      await Promise.all(loops);
    }
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'after the rush' } });
    await witness.next((frame) => frame.message?.id === posted.body.id);
    const isPosted = (frame: Frame) => frame.message?.id === posted.body.id;
    await Promise.all(newcomers.map((socket) => socket.next(isPosted, 2000).catch(() => undefined)));

    // Assess: every open socket is still a connection of the room and got the message
    const outcome = await Promise.all(
      newcomers.map(async (socket) => {
        const socketId = await socket.socketId();
        return {
          socketId,
          open: socket.isOpen,
          stored: Boolean((await recordsOf(socketId, roomId, owner.userId)).byRoom),
          received: socket.frames.some(isPosted),
        };
      }),
    );
    expect(outcome.filter((entry) => !entry.stored || !entry.received)).toEqual([]);
  });
});

describe('DELETE /users/{userId}/connections', () => {
  type Auth = Pick<ApiOptions, 'token' | 'apiKey'>;

  it.each([
    { caller: 'the user', auth: (self: string): Promise<Auth> | Auth => ({ token: self }) },
    { caller: 'an admin', auth: async (): Promise<Auth> => ({ token: (await user('admin', ['admin'])).token }) },
    { caller: 'the API key', auth: (): Auth => ({ apiKey: project.apiKey }) },
  ])("from $caller closes every room and user-channel socket of the user and no one else's", async ({ auth }) => {
    // Prepare
    const [alice, bob] = await Promise.all([user('alice'), user('bob')]);
    const shared = await room('group', [bob.userId], alice);
    const own = await room('group', [], bob);
    const aliceRoom = await join(shared.roomId, alice.token);
    const aliceChannel = track(await connectUser(alice.userId, alice.token));
    const bobSockets = [
      await join(shared.roomId, bob.token),
      await join(shared.roomId, bob.token),
      await join(own.roomId, bob.token),
      track(await connectUser(bob.userId, bob.token)),
    ];
    await aliceRoom.next((frame) => frame.type === 'subscription_count' && frame.subscriptionCount === 3);

    // Act
    const response = await api(`/users/${bob.userId}/connections`, { ...(await auth(bob.token)), method: 'DELETE' });
    const closes = await Promise.all(bobSockets.map((socket) => closedWithin(socket)));

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { closed: 4 } });
    for (const close of closes) expect(close.code).toBe(1000);
    const left = await aliceRoom.next((frame) => frame.type === 'member_left');
    expect(left).toEqual({ type: 'member_left', roomId: shared.roomId, userId: bob.userId, subscriptionCount: 1 });
    expect(aliceRoom.ofType('member_left')).toHaveLength(1);
    await settle(aliceRoom);
    await settle(aliceChannel);
    expect(aliceRoom.isOpen && aliceChannel.isOpen).toBe(true);
    expect(await liveConnectionsOf(bob.userId)).toEqual([]);
    expect(await liveConnectionsOf(alice.userId)).toHaveLength(2);
  });

  it.each([
    { caller: 'another member', roles: undefined },
    { caller: 'a moderator', roles: ['moderator'] },
  ])('is refused with 403 forbidden for $caller and closes nothing', async ({ roles }) => {
    // Prepare
    const bob = await user('bob');
    const mallory = await user('mallory', roles);
    const channel = track(await connectUser(bob.userId, bob.token));

    // Act
    const response = await api(`/users/${bob.userId}/connections`, { token: mallory.token, method: 'DELETE' });
    await settle(channel);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect(channel.isOpen).toBe(true);
  });

  it('answers closed 0 for a user without connections', async () => {
    // Act
    const response = await api(`/users/${uniqueId('nobody')}/connections`, { apiKey: project.apiKey, method: 'DELETE' });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { closed: 0 } });
  });
});
