import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type ConnectionState, createRoomClient, type Message, type RoomClient } from '../../sdk/index';
import { clientOf, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

const MESSAGES = 60;
const PACE_MS = 100;
/** The server goes down after this many messages were stored. */
const STOP_AFTER = 20;

let dataDir: string;
let server: LocalProcess | undefined;

/** `npm start` on `port` (0: a free one) with data kept in `dataDir`, so a restart finds its rooms and messages. */
const start = (port: number) => startLocalProcess({ env: { PORT: String(port), CHAT_DATA_DIR: dataDir } });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sdk-restart-'));
  server = await start(0);
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the room client across a server restart', () => {
  it('ends with exactly the ids sent, in order, none twice, after passing through reconnecting', { timeout: 180_000 }, async () => {
    // Prepare
    const first = server as LocalProcess;
    const { baseUrl, apiKey } = first;
    const port = Number(new URL(baseUrl).port);
    const request = clientOf(baseUrl);
    const receiverId = uniqueId('receiver');
    const issued = await request('/auth/token', { apiKey, body: { userId: receiverId } });
    const roomId = uniqueId('room');
    const created = await request('/rooms', { token: issued.body.token, body: { id: roomId, type: 'group', members: ['sender'] } });
    expect(created.status).toBe(201);
    const receiver: RoomClient = createRoomClient({
      baseUrl,
      roomId,
      token: issued.body.token,
      WebSocket,
      // Back on the WebSocket soon if a reconnect lands on SSE or polling while the server comes up.
      upgradeIntervalMs: 1000,
    });
    const states: ConnectionState[] = [receiver.state];
    const received: Message[] = [];
    receiver.on('state', (state) => states.push(state));
    receiver.on('message', (message) => received.push(message));
    const sent: number[] = [];
    const progress = () =>
      `states ${states.join(' → ')}; sent ${sent.length}, received ${received.length}; last error ${receiver.lastError?.code} ${receiver.lastError?.message}`;
    const waitFor = async (what: string, predicate: () => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; ${progress()}`);
        await sleep(25);
      }
    };
    await waitFor('receiver connected', () => receiver.state === 'connected', 20_000);

    // Act: a sender posts at a steady pace, retrying each message (same clientMessageId) until it is stored
    const sending = (async () => {
      for (let index = 0; index < MESSAGES; index += 1) {
        const deadline = Date.now() + 90_000;
        for (;;) {
          const answer = await request(`/rooms/${roomId}/messages`, {
            apiKey,
            body: { userId: 'sender', content: `message ${index}`, clientMessageId: `m-${index}` },
          }).catch(() => undefined);
          if (answer && (answer.status === 201 || answer.status === 200)) {
            sent.push(answer.body.id);
            break;
          }
          if (Date.now() > deadline) throw new Error(`message ${index} not stored within 90 s`);
          await sleep(PACE_MS);
        }
        await sleep(PACE_MS);
      }
    })();
    await waitFor('messages before the stop', () => sent.length >= STOP_AFTER, 30_000);
    await first.stop();
    const restarted = await start(port);
    server = restarted;
    await sending;
    await waitFor('every message received', () => received.length >= MESSAGES, 60_000);
    await waitFor('back on the WebSocket', () => receiver.state === 'connected', 30_000);
    // Late duplicates would show up within a few more frames.
    await sleep(1000);
    receiver.close();

    // Assess
    expect(restarted.baseUrl).toBe(baseUrl);
    expect(new Set(sent).size).toBe(MESSAGES);
    expect(received.map((message) => message.id)).toEqual(sent);
    expect(received.map((message) => message.content)).toEqual(Array.from({ length: MESSAGES }, (_, index) => `message ${index}`));
    expect(states).toContain('reconnecting');
    expect(states.slice(0, 3)).toEqual(['connecting', 'connected', 'reconnecting']);
    expect(states.at(-1)).toBe('disconnected');
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
