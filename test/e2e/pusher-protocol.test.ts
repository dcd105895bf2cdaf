import Echo from 'laravel-echo';
import Pusher, { type Options } from 'pusher-js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newUser, runtime, uniqueId } from '../support/api';
import {
  connectPusher,
  createPusherApp,
  independentChannelAuth,
  nextEvent,
  type PusherAppKeys,
  pusherOptions,
  RawPusherSocket,
  record,
  subscribed,
} from '../support/pusher';
import { realtimeSuite, settle } from '../support/realtime-suite';

/**
 * The Pusher Channels protocol 7 at `/app/<key>`: the real pusher-js and Laravel Echo, unchanged,
 * against the local runtime, and a raw socket for the protocol's frames and errors with
 * signatures computed in the test. docs/pusher.md describes the mapping of channels to rooms.
 */

const { project, join } = realtimeSuite('pusher-protocol');
let app: PusherAppKeys;
const clients: { disconnect(): void }[] = [];
const raws: RawPusherSocket[] = [];

beforeAll(async () => {
  app = await createPusherApp(project.apiKey);
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await Promise.all(raws.splice(0).map((socket) => socket.close()));
});

const keep = <T extends { disconnect(): void }>(client: T) => {
  clients.push(client);
  return client;
};

/** A group room whose first user owns it and whose others are members. */
async function roomOf(userCount: number) {
  const users = await Promise.all(Array.from({ length: userCount }, (_, index) => newUser(project, `member${index}`)));
  const roomId = uniqueId('room');
  const created = await api('/rooms', {
    token: users[0]?.token,
    body: { id: roomId, type: 'group', members: users.slice(1).map((user) => user.userId) },
  });
  expect(created.status).toBe(201);
  return { roomId, users };
}

describe('pusher-js', () => {
  it('connects, subscribes to a private channel and receives a message posted through POST /messages', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const client = keep(await connectPusher(app.key, alice.token));
    const { channel } = await subscribed(client, `private-room-${roomId}`);
    const received = nextEvent(channel, 'message');

    // Act
    const posted = await api('/messages', { token: bob.token, body: { roomId, content: 'hello pusher' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(client.connection.socket_id).toMatch(/^\d+\.\d+$/);
    expect(await received).toMatchObject({ id: posted.body.id, roomId, userId: bob.userId, content: 'hello pusher' });
  });

  it("sees a second client's member_added and member_removed on a presence channel, with user_info", async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const first = keep(await connectPusher(app.key, alice.token, withPresenceInfo(alice.token, { name: 'Alice' })));
    const { channel, data: members } = await subscribed(first, `presence-room-${roomId}`);
    expect(members.count).toBe(1);
    expect(members.me).toEqual({ id: alice.userId, info: { name: 'Alice' } });
    const added = nextEvent(channel, 'pusher:member_added');

    // Act
    const second = keep(await connectPusher(app.key, bob.token, withPresenceInfo(bob.token, { name: 'Bob' })));
    const { data: membersOfSecond } = await subscribed(second, `presence-room-${roomId}`);
    // pusher-js hands over its live member list, which its disconnect empties.
    const seenBySecond = { count: membersOfSecond.count, members: { ...membersOfSecond.members } };
    const member = await added;
    const removed = nextEvent(channel, 'pusher:member_removed');
    second.disconnect();

    // Assess
    expect(member).toEqual({ id: bob.userId, info: { name: 'Bob' } });
    expect(seenBySecond.count).toBe(2);
    expect(seenBySecond.members).toEqual({ [alice.userId]: { name: 'Alice' }, [bob.userId]: { name: 'Bob' } });
    expect(await removed).toEqual({ id: bob.userId, info: { name: 'Bob' } });
  });

  it('relays a client event to the other subscriber and never echoes it to the sender', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const sender = keep(await connectPusher(app.key, alice.token));
    const receiver = keep(await connectPusher(app.key, bob.token));
    const { channel: sent } = await subscribed(sender, `private-room-${roomId}`);
    const { channel: heard } = await subscribed(receiver, `private-room-${roomId}`);
    const echoed = record(sent, 'client-typing');
    const relayed = nextEvent(heard, 'client-typing');

    // Act
    expect(sent.trigger('client-typing', { typing: true })).toBe(true);

    // Assess
    expect(await relayed).toEqual({ typing: true });
    // An echo would have gone out in the same fan-out as the relay, before the answer the receiver sends now.
    const answered = nextEvent(sent, 'client-seen');
    heard.trigger('client-seen', {});
    await answered;
    expect(echoed).toEqual([]);
  });

  it('is refused a channel of a room the user is not a member of', async () => {
    // Prepare
    const { roomId } = await roomOf(1);
    const outsider = await newUser(project, 'outsider');
    const client = keep(await connectPusher(app.key, outsider.token));

    // Act
    const refusal = await subscribed(client, `private-room-${roomId}`).then(
      () => undefined,
      (error) => error.detail,
    );

    // Assess
    expect(refusal).toMatchObject({ type: 'AuthError', status: 403 });
  });

  it('reconnects after the server closes its socket, with a new socket id, and receives again', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const client = keep(await connectPusher(app.key, alice.token));
    const { channel } = await subscribed(client, `private-room-${roomId}`);
    const before = client.connection.socket_id;
    const resubscribed = nextEvent(channel, 'pusher:subscription_succeeded', 20_000);

    // Act
    const closed = await api(`/users/${alice.userId}/connections`, { method: 'DELETE', token: alice.token });
    await resubscribed;
    const received = nextEvent(channel, 'message');
    await api('/messages', { token: bob.token, body: { roomId, content: 'after the reconnect' } });

    // Assess
    expect(closed.body).toEqual({ closed: 1 });
    expect(client.connection.socket_id).not.toBe(before);
    expect(await received).toMatchObject({ content: 'after the reconnect' });
  });

  it('receives POST /events, except the socket named by excludeSocketId (its Pusher socket id)', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const excluded = keep(await connectPusher(app.key, alice.token));
    const included = keep(await connectPusher(app.key, bob.token));
    const { channel: quiet } = await subscribed(excluded, `private-room-${roomId}`);
    const { channel: loud } = await subscribed(included, `private-room-${roomId}`);
    const unwanted = record(quiet, 'order.shipped');
    const wanted = nextEvent(loud, 'order.shipped');

    // Act
    const published = await api('/events', {
      apiKey: project.apiKey,
      body: { roomIds: [roomId], name: 'order.shipped', data: { orderId: 7 }, socket_id: excluded.connection.socket_id },
    });

    // Assess
    expect(published.status).toBe(202);
    expect(await wanted).toEqual({ orderId: 7 });
    expect(unwanted).toEqual([]);
  });

  it('shares rooms with native sockets: a native client event reaches pusher-js, a pusher-js one the native socket', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    const native = await join(roomId, alice.token);
    const client = keep(await connectPusher(app.key, bob.token));
    const { channel } = await subscribed(client, `private-room-${roomId}`);
    const toPusher = nextEvent(channel, 'client-wave');

    // Act
    native.send({ type: 'client-wave', data: { from: 'native' } });
    const fromPusher = native.next((frame) => frame.type === 'event' && frame.event === 'client-nod');
    channel.trigger('client-nod', { from: 'pusher' });

    // Assess
    expect(await toPusher).toEqual({ from: 'native' });
    expect(await fromPusher).toMatchObject({ roomId, event: 'client-nod', data: { from: 'pusher' }, userId: bob.userId });
    await settle(native);
  });
});

describe('tenants', () => {
  it("keeps another project's room of the same id out of a subscriber's channel, and refuses one that exists only there", async () => {
    // Prepare: the same room id in both projects, and one room only the other project has.
    const other = await createTestProject('pusher-other');
    const [mine, theirs] = await Promise.all([newUser(project, 'mine'), newUser(other, 'theirs')]);
    const shared = uniqueId('room');
    const onlyTheirs = uniqueId('room');
    for (const [token, id] of [
      [mine.token, shared],
      [theirs.token, shared],
      [theirs.token, onlyTheirs],
    ] as const) {
      expect((await api('/rooms', { token, body: { id, type: 'group' } })).status).toBe(201);
    }
    const socket = await RawPusherSocket.open(app.key);
    raws.push(socket);
    const subscribe = async (roomId: string) => {
      const channel = `private-room-${roomId}`;
      await socket.subscribeSigned(app, channel, mine.userId);
      return channel;
    };
    const own = await subscribe(shared);
    await socket.next((frame) => frame.event === 'pusher_internal:subscription_succeeded' && frame.channel === own);

    // Act
    const foreign = await subscribe(onlyTheirs);
    const refused = await socket.next((frame) => frame.event === 'pusher:subscription_error');
    await api('/messages', { token: theirs.token, body: { roomId: shared, content: 'from the other project' } });
    await api('/messages', { token: mine.token, body: { roomId: shared, content: 'from mine' } });
    await socket.next((frame) => frame.event === 'message' && frame.data.content === 'from mine');

    // Assess
    expect(refused).toMatchObject({ channel: foreign, data: { type: 'NotFound', status: 404 } });
    expect(socket.frames.filter((frame) => frame.event === 'message').map((frame) => frame.data.content)).toEqual(['from mine']);
  });
});

describe('Laravel Echo with its pusher broadcaster', () => {
  it('listens on a private channel, joins a presence channel and whispers', async () => {
    // Prepare
    const { roomId, users } = await roomOf(2);
    const [alice, bob] = users as [{ userId: string; token: string }, { userId: string; token: string }];
    // Echo's own options, as a Laravel app passes them: `authEndpoint` and `auth` (pusher-js's older form).
    const echoOf = (token: string, name: string) => {
      const options = pusherOptions(token);
      const echo = new Echo({
        broadcaster: 'pusher',
        key: app.key,
        Pusher,
        cluster: options.cluster,
        wsHost: options.wsHost,
        wsPort: options.wsPort,
        forceTLS: false,
        enabledTransports: ['ws'],
        disableStats: true,
        authEndpoint: `${runtime().baseUrl}/auth/channel`,
        auth: { headers: { Authorization: `Bearer ${token}` }, params: { presenceInfo: JSON.stringify({ name }) } },
      } as never);
      clients.push(echo);
      return echo;
    };
    const first = echoOf(alice.token, 'Alice');
    const second = echoOf(bob.token, 'Bob');
    const here = new Promise<any[]>((resolve) => first.join(`room-${roomId}`).here(resolve));
    const messages: any[] = [];
    const message = new Promise((resolve) =>
      first.private(`room-${roomId}`).listen('.message', (data: any) => {
        messages.push(data);
        resolve(data);
      }),
    );
    expect(await here).toEqual([{ name: 'Alice' }]);
    const joining = new Promise((resolve) => first.join(`room-${roomId}`).joining(resolve));
    const whisper = new Promise((resolve) => first.private(`room-${roomId}`).listenForWhisper('typing', resolve));

    // Act
    const presence = second.join(`room-${roomId}`);
    await new Promise((resolve) => presence.here(resolve));
    const bobPrivate = second.private(`room-${roomId}`);
    await new Promise((resolve) => bobPrivate.subscribed(() => resolve(undefined)));
    bobPrivate.whisper('typing', { name: 'Bob' });
    await api('/messages', { token: bob.token, body: { roomId, content: 'via echo' } });

    // Assess
    expect(await joining).toEqual({ name: 'Bob' });
    expect(await whisper).toEqual({ name: 'Bob' });
    expect(await message).toMatchObject({ content: 'via echo' });
  });
});

/** pusher-js options that send `presenceInfo` to `/auth/channel` in its form body (pusher-js's `params`). */
function withPresenceInfo(token: string, info: Record<string, unknown>): Partial<Options> {
  const { channelAuthorization } = pusherOptions(token);
  return {
    channelAuthorization: { ...channelAuthorization, params: { presenceInfo: JSON.stringify(info) } } as Options['channelAuthorization'],
  };
}

describe('the protocol frame by frame', () => {
  const open = async () => {
    const socket = await RawPusherSocket.open(app.key);
    raws.push(socket);
    return socket;
  };

  it('opens with connection_established, answers ping with pong and verifies an independently signed subscription', async () => {
    // Prepare
    const { roomId, users } = await roomOf(1);
    const socket = await open();
    const socketId = await socket.socketId();
    const channel = `private-room-${roomId}`;

    // Act
    socket.send({ event: 'pusher:ping', data: {} });
    await socket.subscribeSigned(app, channel, users[0]?.userId as string);
    const succeeded = await socket.next((frame) => frame.event === 'pusher_internal:subscription_succeeded');

    // Assess
    expect(socket.frames[0]).toEqual({
      event: 'pusher:connection_established',
      data: { socket_id: socketId, activity_timeout: 120 },
    });
    expect(socket.frames.some((frame) => frame.event === 'pusher:pong')).toBe(true);
    expect(succeeded.channel).toBe(channel);
  });

  it.each([
    ['a tampered signature', (auth: string) => `${auth.slice(0, -1)}${auth.endsWith('0') ? '1' : '0'}`, 401],
    ['another app key', (auth: string) => `nokey${auth.slice(auth.indexOf(':'))}`, 401],
    ['no auth at all', () => undefined, 401],
  ])('refuses %s with pusher:subscription_error', async (_name, mangle, status) => {
    // Prepare
    const { roomId, users } = await roomOf(1);
    const socket = await open();
    const socketId = await socket.socketId();
    const channel = `private-room-${roomId}`;
    const channelData = JSON.stringify({ user_id: users[0]?.userId });

    // Act
    socket.send({
      event: 'pusher:subscribe',
      data: { channel, auth: mangle(independentChannelAuth(app, socketId, channel, channelData)), channel_data: channelData },
    });
    const refused = await socket.next((frame) => frame.event === 'pusher:subscription_error');

    // Assess
    expect(refused).toMatchObject({ channel, data: { type: 'AuthError', status } });
  });

  it("refuses a signature made for another socket's id", async () => {
    const { roomId, users } = await roomOf(1);
    const [mine, theirs] = await Promise.all([open(), open()]);
    const channel = `private-room-${roomId}`;
    const channelData = JSON.stringify({ user_id: users[0]?.userId });

    mine.send({
      event: 'pusher:subscribe',
      data: { channel, auth: independentChannelAuth(app, await theirs.socketId(), channel, channelData), channel_data: channelData },
    });

    expect(await mine.next((frame) => frame.event === 'pusher:subscription_error')).toMatchObject({ data: { status: 401 } });
  });

  it.each([
    ['a public channel', 'room-abc'],
    ['an unknown prefix', 'private-encrypted-room-abc'],
    ['a room id with a #', 'private-room-a#b'],
  ])('refuses %s as an invalid channel', async (_name, channel) => {
    const socket = await open();
    const socketId = await socket.socketId();

    socket.send({ event: 'pusher:subscribe', data: { channel, auth: independentChannelAuth(app, socketId, channel) } });

    expect(await socket.next((frame) => frame.event === 'pusher:subscription_error')).toMatchObject({
      channel,
      data: { type: 'InvalidChannel', status: 404 },
    });
  });

  it('answers frames that are not the protocol with pusher:error and keeps the socket', async () => {
    const socket = await open();
    await socket.socketId();

    socket.send('not json');
    socket.send({ data: 'no event' });
    socket.send({ event: 'pusher:subscribe', data: { auth: 'x' } });
    socket.send({ event: 'pusher:signin', data: {} });
    socket.send({ event: 'client-x', channel: 'private-room-nowhere', data: {} });
    const errors = () => socket.frames.filter((frame) => frame.event === 'pusher:error').map((frame) => frame.data.code);
    // Each frame is its own invocation, so the answers may come in any order.
    await socket.next(() => errors().length === 5);
    await socket.settle();

    expect(errors().sort()).toEqual([4200, 4200, 4200, 4301, null]);
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
  });

  it("never echoes a client event to its socket, not even on the room's other channel it holds", async () => {
    // Prepare: one socket on both channels of a room, another user's socket on the private one.
    const { roomId, users } = await roomOf(2);
    const [sender, receiver] = [await open(), await open()];
    const [alice, bob] = users.map((user) => user.userId) as [string, string];
    await sender.subscribeSigned(app, `private-room-${roomId}`, alice);
    await sender.subscribeSigned(app, `presence-room-${roomId}`, alice);
    await receiver.subscribeSigned(app, `private-room-${roomId}`, bob);
    await sender.next(() => sender.frames.filter((frame) => frame.event === 'pusher_internal:subscription_succeeded').length === 2);
    await receiver.next((frame) => frame.event === 'pusher_internal:subscription_succeeded');

    // Act
    sender.send({ event: 'client-wave', channel: `private-room-${roomId}`, data: { hi: 1 } });
    await receiver.next((frame) => frame.event === 'client-wave');
    receiver.send({ event: 'client-back', channel: `private-room-${roomId}`, data: {} });
    await sender.next((frame) => frame.event === 'client-back');

    // Assess
    expect(sender.frames.filter((frame) => frame.event === 'client-wave')).toEqual([]);
  });

  it('holds client events to the native limit per socket (RATE_LIMIT_CLIENT_EVENTS_PER_SECOND, 10): past it pusher:error 4301, the socket stays', async () => {
    // Prepare
    const { roomId, users } = await roomOf(1);
    const socket = await open();
    const channel = `private-room-${roomId}`;
    await socket.subscribeSigned(app, channel, users[0]?.userId as string);
    await socket.next((frame) => frame.event === 'pusher_internal:subscription_succeeded');

    // Act: 25 at once, so that however the burst falls across a second's boundary one second holds more than 10.
    for (let index = 0; index < 25; index++) socket.send({ event: 'client-burst', channel, data: { index } });
    const refused = await socket.next((frame) => frame.event === 'pusher:error' && frame.data.code === 4301);
    await socket.settle();

    // Assess
    expect(refused).toMatchObject({ channel, data: { code: 4301, message: expect.stringContaining('rate limit') } });
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
  });

  it('answers a cache channel with pusher:cache_miss, then with the last server event', async () => {
    // Prepare
    const { roomId, users } = await roomOf(1);
    const channel = `private-cache-room-${roomId}`;
    const subscribe = (socket: RawPusherSocket) => socket.subscribeSigned(app, channel, users[0]?.userId as string);
    const first = await open();
    await subscribe(first);
    const miss = await first.next((frame) => frame.event === 'pusher:cache_miss');

    // Act
    await api('/events', { apiKey: project.apiKey, body: { roomIds: [roomId], name: 'score', data: { home: 2 } } });
    const second = await open();
    await subscribe(second);
    const replayed = await second.next((frame) => frame.event === 'score');

    // Assess
    expect(miss).toEqual({ event: 'pusher:cache_miss', channel });
    expect(replayed).toEqual({ event: 'score', channel, data: { home: 2 } });
  });

  it('refuses the upgrade for an unknown app key and an unsupported protocol', async () => {
    const unknown = await RawPusherSocket.open('no-such-key').then(
      () => undefined,
      (error) => error,
    );
    const old = await RawPusherSocket.open(app.key, 'protocol=4').then(
      () => undefined,
      (error) => error,
    );

    expect(unknown?.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('pusher_app_not_found');
    expect(old?.status).toBe(400);
    expect(JSON.parse(old.body).error.code).toBe('unsupported_protocol');
  });
});
