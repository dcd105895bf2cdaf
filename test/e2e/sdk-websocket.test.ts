import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type ChatError,
  type ConnectionState,
  createRoomClient,
  type Message,
  type RoomClient,
  type RoomClientOptions,
  type RoomEvent,
} from '../../sdk/index';
import { api, createTestProject, newGroupRoom, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { recordingWebSocket } from '../support/ws';

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('sdk-websocket');
});

/** A room client with everything it emits recorded, and a way to wait for what a test expects. */
interface Watched {
  readonly client: RoomClient;
  readonly states: ConnectionState[];
  readonly messages: Message[];
  readonly events: RoomEvent[];
  readonly errors: ChatError[];
  readonly joined: string[];
  readonly left: string[];
  until(what: string, predicate: () => boolean, timeoutMs?: number): Promise<void>;
}

const clients: RoomClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

function watch(options: Omit<RoomClientOptions, 'baseUrl'> & { baseUrl?: string }): Watched {
  const client = createRoomClient({ baseUrl: runtime().baseUrl, WebSocket, ...options });
  clients.push(client);
  const watched: Watched = {
    client,
    states: [client.state],
    messages: [],
    events: [],
    errors: [],
    joined: [],
    left: [],
    until: (what, predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const check = () => {
          if (predicate()) return resolve();
          if (Date.now() > deadline) {
            return reject(
              new Error(`${what}: not within ${timeoutMs} ms; states ${watched.states.join(' → ')}, error ${client.lastError?.code}`),
            );
          }
          setTimeout(check, 20);
        };
        check();
      }),
  };
  client.on('state', (state) => watched.states.push(state));
  client.on('message', (message) => watched.messages.push(message));
  client.on('event', (event) => watched.events.push(event));
  client.on('error', (error) => watched.errors.push(error));
  client.on('member_joined', ({ userId }) => watched.joined.push(userId));
  client.on('member_left', ({ userId }) => watched.left.push(userId));
  return watched;
}

/** Connected, with the opening frames received (the socket id comes in `connected`, members in `subscription_succeeded`). */
async function ready(watched: Watched) {
  await watched.until('connected', () => watched.client.state === 'connected' && watched.client.socketId !== undefined);
  await watched.until('presence snapshot', () => watched.client.members.length > 0);
  return watched;
}

const post = (roomId: string, token: string, content: string) => api<Message>(`/rooms/${roomId}/messages`, { token, body: { content } });

describe('the room client over WebSocket', () => {
  it('connects over WebSocket and delivers a message posted over REST, once', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const receiver = await ready(watch({ roomId, token: bob.token }));

    // Act
    const posted = await post(roomId, owner.token, 'hello from REST');
    await receiver.until('message', () => receiver.messages.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    expect(posted.status).toBe(201);
    expect(receiver.states).toEqual(['connecting', 'connected']);
    expect(receiver.messages).toEqual([posted.body]);
    expect(receiver.client.socketId).toEqual(expect.any(String));
  });

  it('pings at pingIntervalMs and, answered each time, stays on the one connection while the room is silent', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const receiver = await ready(watch({ roomId, token: owner.token, pingIntervalMs: 100 }));

    // Act: ten intervals of silence but for the pings; unanswered, the client would drop after two
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // Assess
    expect(receiver.states).toEqual(['connecting', 'connected']);
    expect(receiver.errors).toEqual([]);
  });

  it('delivers the room’s recent history first, oldest first, then live messages, each once', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const before: Message[] = [];
    for (const content of ['one', 'two', 'three']) before.push((await post(roomId, owner.token, content)).body);

    // Act
    const receiver = await ready(watch({ roomId, token: owner.token, history: 2 }));
    await receiver.until('history', () => receiver.messages.length >= 2);
    const live = (await post(roomId, owner.token, 'four')).body;
    await receiver.until('live message', () => receiver.messages.length >= 3);

    // Assess
    expect(receiver.messages.map((message) => message.id)).toEqual([before[1]?.id, before[2]?.id, live.id]);
    expect(receiver.client.lastMessageId).toBe(live.id);
  });

  it('keeps the presence list from the snapshot, joins and leaves', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const alice = await ready(watch({ roomId, token: owner.token }));

    // Act
    const bobClient = await ready(watch({ roomId, token: bob.token }));
    await alice.until('bob joined', () => alice.client.members.includes(bob.userId));
    const bothPresent = { alice: [...alice.client.members].sort(), bob: [...bobClient.client.members].sort() };
    bobClient.client.close();
    await alice.until('bob left', () => !alice.client.members.includes(bob.userId));

    // Assess
    expect(bothPresent).toEqual({ alice: [owner.userId, bob.userId].sort(), bob: [owner.userId, bob.userId].sort() });
    expect(alice.joined).toEqual([bob.userId]);
    expect(alice.left).toEqual([bob.userId]);
    expect(alice.client.members).toEqual([owner.userId]);
    expect(alice.client.subscriptionCount).toBe(1);
  });

  it('sends with an ack: resolves with the stored message, which reaches the other member once', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const alice = await ready(watch({ roomId, token: owner.token }));
    const receiver = await ready(watch({ roomId, token: bob.token }));
    const clientMessageId = uniqueId('c');

    // Act
    const sent = await alice.client.send('sent over the socket', { clientMessageId, attachments: ['https://example.com/a.png'] });
    await receiver.until('delivered', () => receiver.messages.length > 0);

    // Assess
    expect(sent).toMatchObject({ roomId, userId: owner.userId, content: 'sent over the socket', clientMessageId });
    expect(receiver.messages).toEqual([sent]);
    expect(alice.messages).toEqual([sent]);
    const stored = await api(`/rooms/${roomId}/messages`, { token: owner.token });
    expect(stored.body.messages).toEqual([sent]);
  });

  it('rejects a send the service refuses with its error code', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const alice = await ready(watch({ roomId, token: owner.token }));

    // Act
    const outcome = await alice.client.send('a reply to nothing', { parent_id: 1 }).catch((error: ChatError) => error);

    // Assess
    expect(outcome).toMatchObject({ name: 'ChatError', code: 'message_not_found' });
    expect((await api(`/rooms/${roomId}/messages`, { token: owner.token })).body.messages).toEqual([]);
  });

  it('sends a client event to the other connections, not back to the sender', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const alice = await ready(watch({ roomId, token: owner.token }));
    const receiver = await ready(watch({ roomId, token: bob.token }));

    // Act
    alice.client.trigger('client-typing', { typing: true });
    await receiver.until('client event', () => receiver.events.length > 0);
    // The sender would have its copy by now if the server echoed it.
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    expect(receiver.events).toEqual([
      expect.objectContaining({
        roomId,
        event: 'client-typing',
        data: { typing: true },
        userId: owner.userId,
        socketId: alice.client.socketId,
      }),
    ]);
    expect(alice.events).toEqual([]);
  });

  it('reports a refused client event (rate limited) as an error with retryAfter', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const alice = await ready(watch({ roomId, token: owner.token }));

    // Act: over the 10 per second a connection may send, in whichever one-second windows a loaded
    // machine spreads them over (40 frames over three windows still put 14 in one)
    for (let index = 0; index < 40; index += 1) alice.client.trigger('client-burst', { index });
    await alice.until('rate limit error', () => alice.errors.length > 0);

    // Assess
    expect(alice.errors[0]).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(alice.client.state).toBe('connected');
  });

  it('refuses a client event name without the client- prefix, locally', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const alice = await ready(watch({ roomId, token: owner.token }));

    // Act
    const attempt = () => alice.client.trigger('typing', {});

    // Assess
    expect(attempt).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('resumes after the server closes the connection: reconnecting, then every message once, in order', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const receiver = await ready(watch({ roomId, token: bob.token, backoff: { baseBackoffMs: 300, maxBackoffMs: 600 } }));
    const first = (await post(roomId, owner.token, 'before')).body;
    await receiver.until('first', () => receiver.messages.length === 1);

    // Act: the server closes every connection of bob; messages keep coming meanwhile
    const closed = await api(`/users/${bob.userId}/connections`, { method: 'DELETE', apiKey: project.apiKey });
    const during: Message[] = [];
    for (let index = 0; index < 5; index += 1) during.push((await post(roomId, owner.token, `during ${index}`)).body);
    await receiver.until('reconnected', () => receiver.states.includes('reconnecting') && receiver.client.state === 'connected');
    const after = (await post(roomId, owner.token, 'after')).body;
    await receiver.until('all messages', () => receiver.messages.length >= 7);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    expect(closed).toMatchObject({ status: 200, body: { closed: 1 } });
    expect(receiver.messages.map((message) => message.id)).toEqual([first, ...during, after].map((message) => message.id));
    expect(receiver.states.slice(0, 4)).toEqual(['connecting', 'connected', 'reconnecting', 'connected']);
  });

  it('asks for history on the first connection only, so a reconnect after a long busy session delivers nothing twice', {
    timeout: 120_000,
  }, async () => {
    // Prepare: over 2,000 messages delivered (backdated imports, broadcast live), then a quiet stretch
    // of more than ten minutes of ids, after which the client forgets the old ids
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const recording = recordingWebSocket();
    const receiver = await ready(
      watch({ roomId, token: bob.token, WebSocket: recording.WebSocket, backoff: { baseBackoffMs: 300, maxBackoffMs: 600 } }),
    );
    const IMPORTED = 2001;
    const since = Date.now() - 30 * 60_000;
    for (let start = 0; start < IMPORTED; start += 100) {
      const rows = Array.from({ length: Math.min(100, IMPORTED - start) }, (_, offset) => ({
        roomId,
        userId: owner.userId,
        content: `busy ${start + offset}`,
        createdAt: new Date(since + start + offset).toISOString(),
      }));
      const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });
      expect(imported.status).toBe(200);
    }
    await receiver.until('imports delivered live', () => receiver.messages.length >= IMPORTED, 90_000);
    const quiet = (await post(roomId, owner.token, 'eleven minutes later, by the ids')).body;
    await receiver.until('quiet message', () => receiver.messages.length >= IMPORTED + 1);

    // Act: the server closes bob's connections (his own token); the client reconnects
    const closed = await api(`/users/${bob.userId}/connections`, { method: 'DELETE', token: bob.token });
    await receiver.until('reconnected', () => receiver.states.includes('reconnecting') && receiver.client.state === 'connected');
    const after = (await post(roomId, owner.token, 'after the reconnect')).body;
    await receiver.until('after', () => receiver.messages.some((message) => message.id === after.id));
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Assess
    const ids = receiver.messages.map((message) => message.id);
    expect(closed).toMatchObject({ status: 200, body: { closed: 1 } });
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(IMPORTED + 2);
    expect(ids.slice(-2)).toEqual([quiet.id, after.id]);
    expect(recording.sockets.map((socket) => socket.url.searchParams.get('history'))).toEqual(['20', '0']);
    expect(recording.sockets[1]?.frames.filter((frame) => frame.type === 'history')).toEqual([]);
  });
});

describe('the room client refused by the service', () => {
  it.each([
    { variant: 'a malformed token', token: async () => 'not.a.jwt', status: 401, code: 'invalid_token' },
    { variant: 'a non-member', token: async () => (await newUser(project, 'outsider')).token, status: 403, code: 'not_a_member' },
  ])('with $variant ends disconnected with $code, without retrying', async ({ token, status, code }) => {
    // Prepare
    const { roomId } = await newGroupRoom(project);
    const outsider = watch({ roomId, token: await token() });

    // Act
    await outsider.until('disconnected', () => outsider.client.state === 'disconnected');
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // Assess
    expect(outsider.states).toEqual(['connecting', 'disconnected']);
    expect(outsider.client.lastError).toMatchObject({ status, code });
    expect(outsider.errors).toEqual([outsider.client.lastError]);
  });

  it('ends disconnected with room_not_found for a room that does not exist', async () => {
    // Prepare
    const bob = await newUser(project, 'bob');

    // Act
    const lost = watch({ roomId: uniqueId('missing'), token: bob.token });
    await lost.until('disconnected', () => lost.client.state === 'disconnected');

    // Assess
    expect(lost.client.lastError).toMatchObject({ status: 404, code: 'room_not_found' });
  });
});
