import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { type Frame, type RoomSocket, tryOpen } from '../../lib/room-socket';
import { clientOf, uniqueId } from '../support/api';

/**
 * Coalesced delivery in hot rooms (docs/architecture.md, "Hot rooms: coalesced delivery"), over real
 * WebSockets on a runtime of this file's own: its room cache lives 100 ms, so a room marked coalesced
 * is seen by the sender almost at once, and its message limit is out of the way of the bursts.
 * Handlers read their settings when first imported, so the domain modules this file calls
 * in-process (to mark a room, to read the room item, to count requests) are imported only after the
 * runtime set them.
 */

const OPERATOR_KEY = 'coalesce-operator-key-0123456789';
const CACHE_TTL_MS = 100;
const WINDOW_MS = 200;
const BATCH_FRAME_MAX_BYTES = 32_768;

let own: LocalRuntime;
let call: ReturnType<typeof clientOf>;
let apiKey: string;
let projectId: string;
let wsUrl: string;
let room: typeof import('#shared/db/room');

beforeAll(async () => {
  own = await startLocalRuntime({
    port: 0,
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      CACHE_TTL_MS: String(CACHE_TTL_MS),
      REALTIME_COALESCE_WINDOW_MS: String(WINDOW_MS),
      RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      // The default, stated: the shared runtime's settings (which keep its rooms from turning hot) reach this worker.
      REALTIME_COALESCE_THRESHOLD_PER_SECOND: '5',
    },
  });
  call = clientOf(own.baseUrl);
  wsUrl = own.baseUrl.replace(/^http/, 'ws');
  const created = await call('/platform/projects', { body: { name: 'coalesce' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
  ({ apiKey, projectId } = created.body);
  room = await import('#shared/db/room');
  // The settings reached the modules this file and the handlers share.
  expect((await import('#shared/config')).config.CACHE_TTL_MS).toBe(CACHE_TTL_MS);
}, 180_000);

afterAll(async () => {
  await own?.stop();
}, 60_000);

const tokenOf = async (userId: string) => (await call('/auth/token', { apiKey, body: { userId } })).body.token as string;

/** A group room with an owner and `count` more members, and their tokens. */
async function groupRoom(count: number) {
  const roomId = uniqueId('room');
  const userIds = Array.from({ length: count + 1 }, () => uniqueId('user'));
  const tokens = await Promise.all(userIds.map(tokenOf));
  const made = await call('/rooms', { token: tokens[0], body: { id: roomId, type: 'group', members: userIds.slice(1) } });
  if (made.status !== 201) throw new Error(`room creation failed: ${made.status} ${JSON.stringify(made.body)}`);
  return { roomId, userIds, tokens: tokens as string[] };
}

/** A room socket, its opening frames received; `batch` asks for batch frames. Raw frame sizes are kept too. */
async function open(roomId: string, token: string, options: { batch?: boolean; history?: number } = {}) {
  const query = new URLSearchParams({ token, history: String(options.history ?? 0) });
  if (options.batch) query.set('batch', '1');
  const handshake = await tryOpen(`${wsUrl}/ws/rooms/${roomId}?${query}`);
  if (!handshake.open) throw new Error(`refused: ${handshake.status} ${JSON.stringify(handshake.body)}`);
  const socket = handshake.socket;
  const sizes: { type: string; bytes: number }[] = [];
  socket.socket.on('message', (data: Buffer) => sizes.push({ type: JSON.parse(data.toString()).type, bytes: data.length }));
  await socket.next((frame) => frame.type === (options.history ? 'history' : 'subscription_succeeded'));
  return { socket, sizes };
}

/** The message frames a socket received, batch frames unpacked, in arrival order. */
const messagesOf = (socket: RoomSocket): Frame[] =>
  socket.frames
    .flatMap((frame) => (frame.type === 'batch' ? (frame.frames as Frame[]) : [frame]))
    .filter((frame) => frame.type === 'message');
const idsOf = (socket: RoomSocket) => messagesOf(socket).map((frame) => frame.message.id as number);

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const post = async (token: string, roomId: string, content: string) => {
  const sent = await call('/messages', { token, body: { roomId, content } });
  if (sent.status !== 201) throw new Error(`send failed: ${sent.status} ${JSON.stringify(sent.body)}`);
  return sent.body.id as number;
};

/** Marks the room coalesced as the publisher's heat would, then waits out the senders' room cache. */
async function makeHot(roomId: string): Promise<void> {
  expect(await room.setRoomCoalesceUntil(projectId, roomId, Date.now() + 60_000)).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, CACHE_TTL_MS * 3));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a coalesced room', () => {
  it('gives an opted-in socket batch frames and another single frames of the same messages, in order, none lost or repeated, over several windows', async () => {
    // Prepare
    const { roomId, tokens } = await groupRoom(3);
    await makeHot(roomId);
    const [sender, batched, single] = tokens as [string, string, string];
    const batchedSocket = await open(roomId, batched, { batch: true });
    const singleSocket = await open(roomId, single);
    const wsSender = await open(roomId, sender, { batch: true });

    // Act: 30 messages over about four windows, every third from the sender's socket (it gets an ack).
    const sent: number[] = [];
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 2) {
        wsSender.socket.send({ type: 'message', content: `burst ${i}`, clientMessageId: `c-${i}` });
        const ack = await wsSender.socket.next((frame) => frame.type === 'ack' && frame.clientMessageId === `c-${i}`, 20_000);
        sent.push(ack.message.id as number);
      } else sent.push(await post(sender, roomId, `burst ${i}`));
      await sleep(25);
    }
    await waitFor(() => idsOf(batchedSocket.socket).length >= sent.length && idsOf(singleSocket.socket).length >= sent.length);
    const { findMessage } = await import('#shared/db/message');
    expect((await findMessage(projectId, roomId, sent[0] as number, { consistent: true }))?.delivery).toBe('coalesced');
    await own.drainStream();
    await sleep(WINDOW_MS * 2);

    // Assess
    expect(idsOf(batchedSocket.socket)).toEqual(sent);
    expect(idsOf(singleSocket.socket)).toEqual(sent);
    const batches = batchedSocket.socket.ofType('batch');
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.length).toBeLessThan(sent.length / 2);
    for (const batch of batches) expect((batch.frames as Frame[]).length).toBeGreaterThan(1);
    expect(singleSocket.socket.ofType('batch')).toEqual([]);
    expect(singleSocket.socket.ofType('message')).toHaveLength(sent.length);
    // The sender's socket never gets what it sent (it has the ack), and gets the rest.
    const fromSocket = sent.filter((_, i) => i % 3 === 2);
    expect(idsOf(wsSender.socket)).toEqual(sent.filter((id) => !fromSocket.includes(id)));
    await Promise.all([batchedSocket, singleSocket, wsSender].map(({ socket }) => socket.close()));
  }, 120_000);

  it('loses nothing across a reconnect in the middle of a burst, with the history resume', async () => {
    // Prepare
    const { roomId, tokens } = await groupRoom(1);
    await makeHot(roomId);
    const [sender, reader] = tokens as [string, string];
    const first = await open(roomId, reader, { batch: true });

    // Act: the socket drops after 15 of 40 messages and comes back with the last 100 as its history.
    const sent: number[] = [];
    let second: Awaited<ReturnType<typeof open>> | undefined;
    for (let i = 0; i < 40; i++) {
      sent.push(await post(sender, roomId, `resume ${i}`));
      if (i === 14) {
        await first.socket.close();
        second = await open(roomId, reader, { batch: true, history: 100 });
      }
      await sleep(20);
    }
    const reopened = second as NonNullable<typeof second>;
    await waitFor(() => idsOf(reopened.socket).length >= 1 && idsOf(reopened.socket).at(-1) === sent.at(-1));
    await sleep(WINDOW_MS * 2);

    // Assess: what the first socket got, the history and what the second got hold every message once by id.
    const history = (reopened.socket.ofType('history')[0]?.messages ?? []) as { id: number }[];
    const live = idsOf(reopened.socket);
    expect(live).toEqual([...live].sort((a, b) => a - b));
    expect(new Set(live).size).toBe(live.length);
    const seen = new Set([...idsOf(first.socket), ...history.map((message) => message.id), ...live]);
    expect([...seen].sort((a, b) => a - b)).toEqual(sent);
    await reopened.socket.close();
  }, 120_000);

  it('splits a window past 32 KB into several batch frames, none larger', async () => {
    // Prepare
    const { roomId, tokens } = await groupRoom(1);
    await makeHot(roomId);
    const reader = await open(roomId, tokens[1] as string, { batch: true });

    // Act: 24 messages of 3,000 characters, sent at once, fall into one or two windows.
    const sent = await Promise.all(Array.from({ length: 24 }, (_, i) => post(tokens[0] as string, roomId, `${i} ${'x'.repeat(3000)}`)));
    await waitFor(() => idsOf(reader.socket).length >= sent.length);
    await sleep(WINDOW_MS * 2);

    // Assess
    expect([...idsOf(reader.socket)].sort((a, b) => a - b)).toEqual([...sent].sort((a, b) => a - b));
    expect(reader.sizes.filter((size) => size.type === 'batch').length).toBeGreaterThan(1);
    for (const size of reader.sizes) expect(size.bytes).toBeLessThanOrEqual(BATCH_FRAME_MAX_BYTES);
    await reader.socket.close();
  }, 120_000);
});

describe('room heat', () => {
  it('turns a room coalesced after a burst past the threshold, and then its sender reads no connection list', async () => {
    // Prepare
    const { roomId, tokens } = await groupRoom(1);
    const reader = await open(roomId, tokens[1] as string, { batch: true });
    const { dynamoRequestsOf } = await import('../support/dynamo-requests');
    const { sendMessage } = await import('#domain/messages/pipeline');
    const { authenticateToken } = await import('#shared/auth');
    const principal = await authenticateToken(tokens[0] as string, undefined);
    const connectionReads = (requests: readonly { command: string; queried?: string }[]) =>
      requests.filter((request) => request.queried?.endsWith('#CONNS'));
    const quietRequests = await dynamoRequestsOf(() => sendMessage(principal, { roomId, content: 'quiet' }, { source: 'api' }));

    // Act: 20 messages inside a second, past the threshold of 5.
    for (let i = 0; i < 20; i++) await post(tokens[0] as string, roomId, `heat ${i}`);
    await waitFor(async () => ((await room.findRoom(projectId, roomId))?.coalesceUntil ?? 0) > Date.now());
    await sleep(CACHE_TTL_MS * 3);
    const hotRequests = await dynamoRequestsOf(() => sendMessage(principal, { roomId, content: 'hot' }, { source: 'api' }));

    // Assess
    const until = (await room.findRoom(projectId, roomId))?.coalesceUntil ?? 0;
    expect(until - Date.now()).toBeGreaterThan(50_000);
    // The recorder sees the sender's requests (the quiet message's connection read among them)...
    expect(quietRequests.some((request) => request.command.startsWith('Put'))).toBe(true);
    expect(connectionReads(quietRequests).length).toBeGreaterThan(0);
    // ...and the hot room's sender stores the message and reads no connection list.
    expect(hotRequests.some((request) => request.command.startsWith('Put'))).toBe(true);
    expect(connectionReads(hotRequests)).toEqual([]);
    await waitFor(() => messagesOf(reader.socket).some((frame) => frame.message.content === 'hot'));
    expect(messagesOf(reader.socket).map((frame) => frame.message.content)).toEqual([
      'quiet',
      ...Array.from({ length: 20 }, (_, i) => `heat ${i}`),
      'hot',
    ]);
    await reader.socket.close();
  }, 120_000);

  it('leaves a quiet room immediate: a single message frame, soon, to an opted-in socket', async () => {
    // Prepare
    const { roomId, tokens } = await groupRoom(1);
    const reader = await open(roomId, tokens[1] as string, { batch: true });

    // Act
    const id = await post(tokens[0] as string, roomId, 'hello');
    const frame = await reader.socket.next((received) => received.type === 'message', 20_000);

    // Assess: the sender posted it (stored without `delivery`), a single frame.
    expect(frame.message.id).toBe(id);
    expect(reader.socket.ofType('batch')).toEqual([]);
    const { findMessage } = await import('#shared/db/message');
    const stored = await findMessage(projectId, roomId, id, { consistent: true });
    expect(stored?.content).toBe('hello');
    expect(stored?.delivery).toBeUndefined();
    await reader.socket.close();
  }, 120_000);
});
