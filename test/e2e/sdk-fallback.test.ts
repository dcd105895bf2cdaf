import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ConnectionState, createRoomClient, type Message, type RoomClient, type RoomClientOptions } from '../../sdk/index';
import { api, createTestProject, newGroupRoom, newUser, runtime, type TestProject } from '../support/api';
import { type BlockingProxy, startBlockingProxy } from '../support/blocking-proxy';

let project: TestProject;
let proxy: BlockingProxy;
beforeAll(async () => {
  project = await createTestProject('sdk-fallback');
  proxy = await startBlockingProxy(runtime().baseUrl);
});
afterAll(async () => {
  await proxy?.stop();
});

const clients: RoomClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
  proxy.refuseWebSocket = false;
  proxy.refuseStream = false;
});

/** A room client behind the proxy, with its states and messages recorded. */
function watch(options: Omit<RoomClientOptions, 'baseUrl'>) {
  const client = createRoomClient({ baseUrl: proxy.baseUrl, WebSocket, ...options });
  clients.push(client);
  const states: ConnectionState[] = [client.state];
  const messages: Message[] = [];
  client.on('state', (state) => states.push(state));
  client.on('message', (message) => messages.push(message));
  const until = (what: string, predicate: () => boolean, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const check = () => {
        if (predicate()) return resolve();
        if (Date.now() > deadline) {
          return reject(new Error(`${what}: not within ${timeoutMs} ms; states ${states.join(' → ')}, error ${client.lastError?.code}`));
        }
        setTimeout(check, 20);
      };
      check();
    });
  return { client, states, messages, until };
}

/** Posted straight to the runtime, not through the proxy. */
const post = (roomId: string, token: string, content: string) => api<Message>(`/rooms/${roomId}/messages`, { token, body: { content } });

describe('the room client behind a proxy that refuses WebSocket upgrades', () => {
  it('falls back to SSE and receives a message posted over REST', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    const refusedBefore = proxy.counts.refusedUpgrades;
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const receiver = watch({ roomId, token: bob.token });
    await receiver.until('sse', () => receiver.client.state === 'sse');

    // Act
    const posted = await post(roomId, owner.token, 'over the stream');
    await receiver.until('message', () => receiver.messages.length > 0);

    // Assess
    expect(receiver.states).toEqual(['connecting', 'sse']);
    expect(receiver.messages).toEqual([posted.body]);
    expect(proxy.counts.refusedUpgrades).toBeGreaterThan(refusedBefore);
    expect(receiver.client.socketId).toBeUndefined();
  });

  it('sends over REST while on SSE, and the message comes back once', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    const { owner, roomId } = await newGroupRoom(project);
    const alice = watch({ roomId, token: owner.token });
    await alice.until('sse', () => alice.client.state === 'sse');

    // Act
    const sent = await alice.client.send('posted by the SDK');
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // Assess
    expect(sent).toMatchObject({ roomId, userId: owner.userId, content: 'posted by the SDK' });
    expect(alice.messages).toEqual([sent]);
    expect(() => alice.client.trigger('client-typing', {})).toThrow(expect.objectContaining({ code: 'not_connected' }));
  });

  it('ends disconnected with the service’s 401 when the token is bad, though the WebSocket hid it', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    const { roomId } = await newGroupRoom(project);

    // Act
    const refused = watch({ roomId, token: 'not.a.jwt' });
    await refused.until('disconnected', () => refused.client.state === 'disconnected');

    // Assess
    expect(refused.states).toEqual(['connecting', 'disconnected']);
    expect(refused.client.lastError).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('moves back to the WebSocket once the proxy lets it through, without losing or repeating a message', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    const { owner, roomId } = await newGroupRoom(project);
    const receiver = watch({ roomId, token: owner.token, upgradeIntervalMs: 300 });
    await receiver.until('sse', () => receiver.client.state === 'sse');
    const onSse = (await post(roomId, owner.token, 'on sse')).body;
    await receiver.until('first message', () => receiver.messages.length === 1);

    // Act
    proxy.refuseWebSocket = false;
    await receiver.until('upgraded', () => receiver.client.state === 'connected');
    const onSocket = (await post(roomId, owner.token, 'on the socket')).body;
    await receiver.until('second message', () => receiver.messages.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    expect(receiver.states).toEqual(['connecting', 'sse', 'connected']);
    expect(receiver.messages.map((message) => message.id)).toEqual([onSse.id, onSocket.id]);
  });
});

describe('the room client behind a proxy that refuses WebSocket upgrades and SSE streams', () => {
  it('falls back to polling and still receives a message posted over REST', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    proxy.refuseStream = true;
    const streamsBefore = proxy.counts.refusedStreams;
    const bob = await newUser(project, 'bob');
    const { owner, roomId } = await newGroupRoom(project, [bob.userId]);
    const receiver = watch({ roomId, token: bob.token, pollIntervalMs: 200 });
    await receiver.until('polling', () => receiver.client.state === 'polling');

    // Act
    const posted = await post(roomId, owner.token, 'picked up by a poll');
    await receiver.until('message', () => receiver.messages.length > 0);
    // A few more polls: each reads the last five seconds again, and must not deliver twice.
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // Assess
    expect(receiver.states).toEqual(['connecting', 'polling']);
    expect(receiver.messages).toEqual([posted.body]);
    expect(proxy.counts.refusedStreams).toBeGreaterThan(streamsBefore);
  });

  it('delivers the recent history once, then new messages in order', async () => {
    // Prepare
    proxy.refuseWebSocket = true;
    proxy.refuseStream = true;
    const { owner, roomId } = await newGroupRoom(project);
    const older = [(await post(roomId, owner.token, 'old 1')).body, (await post(roomId, owner.token, 'old 2')).body];
    const receiver = watch({ roomId, token: owner.token, pollIntervalMs: 200, history: 5 });
    await receiver.until('polling', () => receiver.client.state === 'polling');

    // Act
    const newer: Message[] = [];
    for (let index = 0; index < 3; index += 1) newer.push((await post(roomId, owner.token, `new ${index}`)).body);
    await receiver.until('all', () => receiver.messages.length >= 5);
    await new Promise((resolve) => setTimeout(resolve, 600));

    // Assess
    expect(receiver.messages.map((message) => message.id)).toEqual([...older, ...newer].map((message) => message.id));
  });
});
