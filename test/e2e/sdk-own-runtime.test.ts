import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type ChatError,
  type ConnectionState,
  createRoomClient,
  type Message,
  type RoomClient,
  type RoomClientOptions,
} from '../../sdk/index';
import { clientOf, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { recordingWebSocket } from '../support/ws';

/** A runtime whose WebSocket defaults differ from the SDK's: no history unless asked, one public-room connection per user and minute. */
let server: LocalProcess;
let request: ReturnType<typeof clientOf>;
beforeAll(async () => {
  server = await startLocalProcess({
    args: ['--in-memory'],
    env: { REALTIME_HISTORY_DEFAULT: '0', RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE: '1' },
  });
  request = clientOf(server.baseUrl);
});
afterAll(async () => {
  await server?.stop();
});

const clients: RoomClient[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tokenFor(userId: string): Promise<string> {
  const issued = await request('/auth/token', { apiKey: server.apiKey, body: { userId } });
  expect(issued.status).toBe(201);
  return issued.body.token;
}

function watch(options: Omit<RoomClientOptions, 'baseUrl'>) {
  const client = createRoomClient({ baseUrl: server.baseUrl, WebSocket, ...options });
  clients.push(client);
  const states: { readonly state: ConnectionState; readonly at: number; readonly error: ChatError | undefined }[] = [];
  const messages: Message[] = [];
  client.on('state', (state) => states.push({ state, at: Date.now(), error: client.lastError }));
  client.on('message', (message) => messages.push(message));
  const until = async (what: string, predicate: () => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: not within ${timeoutMs} ms; states ${states.map(({ state }) => state).join(' → ')}, error ${client.lastError?.code}`,
        );
      }
      await sleep(20);
    }
  };
  return { client, states, messages, until };
}

describe('the room client on a server whose history default is 0', () => {
  it('asks for its own history explicitly and gets it in the history frame, without waiting for REST', async () => {
    // Prepare
    const alice = uniqueId('alice');
    const token = await tokenFor(alice);
    const roomId = uniqueId('room');
    expect((await request('/rooms', { token, body: { id: roomId, type: 'group', members: [] } })).status).toBe(201);
    const posted: Message[] = [];
    for (const content of ['one', 'two', 'three'])
      posted.push((await request(`/rooms/${roomId}/messages`, { token, body: { content } })).body);
    const recording = recordingWebSocket();

    // Act
    const started = Date.now();
    const receiver = watch({ roomId, token, WebSocket: recording.WebSocket });
    await receiver.until('history', () => receiver.messages.length >= 3);
    const elapsed = Date.now() - started;

    // Assess
    expect(receiver.messages.map((message) => message.id)).toEqual(posted.map((message) => message.id));
    expect(recording.sockets.map((socket) => socket.url.searchParams.get('history'))).toEqual(['20']);
    expect(recording.sockets[0]?.frames.find((frame) => frame.type === 'history')?.messages).toHaveLength(3);
    // Without the explicit history it waited 3 s for a frame that never came, then read REST.
    expect(elapsed).toBeLessThan(2800);
  });
});

describe('the room client refused with 429 and Retry-After (one public-room connection per user and minute)', () => {
  it('reports rate_limited with retryAfter and does not retry before it', async () => {
    // Prepare: both connections in the same one-minute window, with seconds to spare
    const carol = uniqueId('carol');
    const token = await tokenFor(carol);
    const roomId = uniqueId('public');
    expect((await request('/rooms', { token, body: { id: roomId, type: 'public' } })).status).toBe(201);
    const leftInWindow = 60_000 - (Date.now() % 60_000);
    if (leftInWindow < 8000) await sleep(leftInWindow + 250);
    const first = watch({ roomId, token });
    await first.until('first connected', () => first.client.state === 'connected');
    const recording = recordingWebSocket();

    // Act
    const second = watch({ roomId, token, WebSocket: recording.WebSocket, backoff: { baseBackoffMs: 50, maxBackoffMs: 100 } });
    await second.until('refused', () => second.client.state === 'reconnecting');
    await sleep(2000);

    // Assess
    const refusal = second.states.find(({ state }) => state === 'reconnecting')?.error;
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: expect.any(Number) });
    expect(refusal?.retryAfter).toBeGreaterThan(2);
    expect(refusal?.retryAfter).toBeLessThanOrEqual(60);
    // Its backoff alone (at most 100 ms) would have retried many times by now.
    expect(recording.sockets).toHaveLength(1);
    expect(second.client.state).toBe('reconnecting');
    expect(first.client.state).toBe('connected');
  });
});
