import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createRoomClient, type Message, type RoomClient, type RoomClientOptions } from '../../sdk/index';

/**
 * The SDK against a real WebSocket server on 127.0.0.1 that speaks the batch frame
 * (`{ type: 'batch', frames: [...] }`), with the room's REST side answered by the same HTTP server
 * (an empty room). The service's own deliverer is tested in the local runtime; here the server is
 * the test's, so each batch holds exactly what a test wants the client to unpack.
 */

const ROOM = 'lobby';
const clients: RoomClient[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const message = (id: number, content = `m${id}`): Message => ({
  id,
  roomId: ROOM,
  userId: 'someone',
  content,
  parent_id: null,
  attachments: [],
  clientMessageId: null,
  createdAt: new Date(Math.floor(id / 1000)).toISOString(),
  moderation: null,
});
const messageFrame = (id: number) => ({ type: 'message', message: message(id) });
const batch = (frames: unknown) => ({ type: 'batch', frames });

/** A fake service: REST answers an empty room; every WebSocket gets the opening frames, then what the test sends. */
async function fakeService() {
  const server = createServer((request, response) => {
    const path = request.url ?? '';
    const body = path.startsWith('/client/feature-flags')
      ? { flags: {}, flagship: false, reconnectBackoff: { baseBackoffMs: 1000, maxBackoffMs: 8000 } }
      : { messages: [], hasMore: false };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(server);
  const sockets = new WebSocketServer({ server });
  const connects: IncomingMessage[] = [];
  const open: WebSocket[] = [];
  const received: Record<string, any>[] = [];
  sockets.on('connection', (socket, request) => {
    connects.push(request);
    open.push(socket);
    socket.on('message', (data) => received.push(JSON.parse(String(data))));
    socket.send(JSON.stringify({ type: 'connected', socketId: 'socket-1' }));
    socket.send(JSON.stringify({ type: 'subscription_succeeded', members: ['someone'], subscriptionCount: 1 }));
    socket.send(JSON.stringify({ type: 'history', messages: [message(1_000_000)] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    connects,
    received,
    /** Sends `frame` as one WebSocket message to the newest socket. */
    send: (frame: unknown) => open.at(-1)?.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    /** Closes every socket from the server's side, as a redeploy or a lost network would. */
    dropAll: () => {
      for (const socket of open.splice(0)) socket.close(1012, 'restart');
    },
  };
}

/** A client of `service` with what it emits recorded in one timeline, in emit order. */
function watch(service: { baseUrl: string }, options: Partial<RoomClientOptions> = {}) {
  const client = createRoomClient({
    baseUrl: service.baseUrl,
    roomId: ROOM,
    token: 'jwt',
    WebSocket,
    backoff: { baseBackoffMs: 50, maxBackoffMs: 100 },
    ...options,
  });
  clients.push(client);
  const timeline: string[] = [];
  const messages: number[] = [];
  client.on('message', ({ id }) => {
    messages.push(id);
    timeline.push(`message ${id}`);
  });
  client.on('event', ({ event }) => timeline.push(`event ${event}`));
  client.on('member_joined', ({ userId }) => timeline.push(`joined ${userId}`));
  client.on('message_updated', ({ messageId, change }) => timeline.push(`updated ${messageId} ${change}`));
  client.on('error', (error) => timeline.push(`error ${error.code}`));
  const until = (what: string, predicate: () => boolean, timeoutMs = 5000) =>
    new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + timeoutMs;
      const check = () => {
        if (predicate()) return resolve();
        if (Date.now() > deadline) return reject(new Error(`${what}: not within ${timeoutMs} ms; timeline ${timeline.join(', ')}`));
        setTimeout(check, 10);
      };
      check();
    });
  return { client, timeline, messages, until };
}

/** Connected, with the `history` frame's message delivered (the replay is over, live frames flow). */
async function connected(service: Awaited<ReturnType<typeof fakeService>>, options: Partial<RoomClientOptions> = {}) {
  const watched = watch(service, options);
  await watched.until('connected with its history', () => watched.client.state === 'connected' && watched.messages.includes(1_000_000));
  return watched;
}

describe('the connect URL', () => {
  it('asks for batch frames with batch=1 by default', async () => {
    // Prepare
    const service = await fakeService();

    // Act
    await connected(service);

    // Assess
    const query = new URL(service.connects[0]?.url ?? '', 'ws://x').searchParams;
    expect(query.get('batch')).toBe('1');
    expect(query.get('history')).toBe('20');
  });

  it('leaves batch out when the batch option is false', async () => {
    // Prepare
    const service = await fakeService();

    // Act
    await connected(service, { batch: false });

    // Assess
    const query = new URL(service.connects[0]?.url ?? '', 'ws://x').searchParams;
    expect(query.has('batch')).toBe(false);
    expect(query.get('token')).toBe('jwt');
  });

  it('carries batch=1 on the legacy wsUrl too', async () => {
    // Prepare
    const service = await fakeService();

    // Act
    await connected(service, { wsUrl: `${service.baseUrl.replace(/^http/, 'ws')}/prod` });

    // Assess
    const query = new URL(service.connects[0]?.url ?? '', 'ws://x').searchParams;
    expect(query.get('batch')).toBe('1');
    expect(query.get('roomId')).toBe(ROOM);
  });
});

describe('a batch frame', () => {
  it('reaches the listeners as the single frames it holds, in order, whatever their kind', async () => {
    // Prepare
    const service = await fakeService();
    const { timeline, until } = await connected(service);
    timeline.length = 0;

    // Act
    service.send(
      batch([
        messageFrame(2_000_000),
        { type: 'member_joined', userId: 'newcomer', subscriptionCount: 2 },
        messageFrame(2_000_001),
        { type: 'event', roomId: ROOM, event: 'client-typing', data: {}, userId: 'someone' },
        { type: 'message_updated', roomId: ROOM, messageId: 2_000_000, change: 'edited', userId: 'someone', at: 'now' },
        messageFrame(2_000_002),
      ]),
    );
    service.send(messageFrame(2_000_003));
    await until('the frame after the batch', () => timeline.includes('message 2000003'));

    // Assess
    expect(timeline).toEqual([
      'message 2000000',
      'joined newcomer',
      'message 2000001',
      'event client-typing',
      'updated 2000000 edited',
      'message 2000002',
      'message 2000003',
    ]);
  });

  it('feeds the timeline that drops repeated ids: a message in a batch and in a single frame is seen once', async () => {
    // Prepare
    const service = await fakeService();
    const { client, messages, until } = await connected(service);

    // Act
    service.send(messageFrame(3_000_000));
    service.send(batch([messageFrame(3_000_000), messageFrame(3_000_001)]));
    service.send(batch([messageFrame(3_000_001), messageFrame(3_000_002)]));
    service.send(messageFrame(3_000_002));
    service.send(messageFrame(3_000_003));
    await until('the last frame', () => messages.includes(3_000_003));

    // Assess
    expect(messages).toEqual([1_000_000, 3_000_000, 3_000_001, 3_000_002, 3_000_003]);
    expect(client.lastMessageId).toBe(3_000_003);
  });

  it('resolves a send whose ack came inside a batch, and delivers that message once', async () => {
    // Prepare
    const service = await fakeService();
    const { client, messages, until } = await connected(service);

    // Act
    const sent = client.send('hello');
    await until('the message frame sent', () => service.received.some((frame) => frame.type === 'message'));
    const { clientMessageId } = service.received.find((frame) => frame.type === 'message') as { clientMessageId: string };
    const stored = { ...message(4_000_001, 'hello'), clientMessageId };
    service.send(batch([messageFrame(4_000_000), { type: 'ack', clientMessageId, message: stored }, { type: 'message', message: stored }]));

    // Assess
    await expect(sent).resolves.toMatchObject({ id: 4_000_001, content: 'hello', clientMessageId });
    await until('both messages', () => messages.includes(4_000_001));
    expect(messages).toEqual([1_000_000, 4_000_000, 4_000_001]);
  });

  it('skips what is not a frame, malformed batches included, and still delivers the frames after it', async () => {
    // Prepare
    const service = await fakeService();
    const { messages, timeline, until } = await connected(service);

    // Act
    service.send(batch('not a list'));
    service.send({ type: 'batch' });
    service.send(
      batch([
        1,
        null,
        'message',
        [messageFrame(5_000_099)],
        { message: message(5_000_098) },
        messageFrame(5_000_000),
        { type: 'message', message: { id: 'not a number' } },
        batch([messageFrame(5_000_097)]),
        messageFrame(5_000_001),
      ]),
    );
    service.send('{"type":"batch","frames":[');
    service.send(messageFrame(5_000_002));
    await until('the frame after the malformed ones', () => messages.includes(5_000_002));

    // Assess
    expect(messages).toEqual([1_000_000, 5_000_000, 5_000_001, 5_000_002]);
    expect(timeline.filter((entry) => entry.startsWith('error'))).toEqual([]);
  });

  it('is unpacked after a reconnect as well, on the new socket', async () => {
    // Prepare
    const service = await fakeService();
    const { client, messages, until } = await connected(service);
    service.connects.length = 0;

    // Act
    service.send(batch([messageFrame(6_000_000)]));
    await until('the first batch', () => messages.includes(6_000_000));
    // The server drops the socket; the client reconnects (history=0, a REST catch-up) and asks for batches again.
    service.dropAll();
    await until('a second connection', () => service.connects.length === 1 && client.state === 'connected', 10_000);
    service.send(batch([messageFrame(6_000_001), messageFrame(6_000_002)]));
    await until('the second batch', () => messages.includes(6_000_002));

    // Assess
    const query = new URL(service.connects[0]?.url ?? '', 'ws://x').searchParams;
    expect(query.get('batch')).toBe('1');
    expect(query.get('history')).toBe('0');
    expect(messages).toEqual([1_000_000, 6_000_000, 6_000_001, 6_000_002]);
  });
});
