import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRoomClient, type FetchLike, type Message, type RoomClient, type Transport } from '../../sdk/index';
import { api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { dataOf, openSse, type SseStream } from '../support/sse';

/**
 * A burst in one room (50 messages at about 20 a second, a busy room's rate) read over SSE and
 * polling, interrupted mid-burst and resumed (`Last-Event-ID`, the `after=` cursor): every message
 * once, in id order. SSE and polling read the room's message partition, so coalesced delivery
 * (which changes only what WebSockets get) must leave them as they are; each room here is marked
 * coalesced where the tree can (see `markRoomCoalesced`), and the SDK's WebSocket client reads the
 * same burst beside them.
 */

const BURST = 50;
/** 20 messages a second: the burst spans several SSE polls (one a second), so an interruption falls inside it. */
const BURST_GAP_MS = 50;
/** Fifty sequential sends take 3 to 15 s beside the rest of the suite, and marking a room coalesced waits out the room cache. */
const BURST_TEST_TIMEOUT_MS = 60_000;

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('sse-polling-burst');
});

/**
 * Marks the room coalesced for ten minutes, so its WebSocket deliveries go through the batched path
 * while this file reads it, and waits out the room cache the message pipeline reads it through.
 * It needs the room entity's `setRoomCoalesceUntil(projectId, roomId, untilMs)` (the coalesced
 * delivery's operation); in a tree without it the room stays quiet and the tests hold just the same.
 * Returns whether the room was marked.
 */
async function markRoomCoalesced(projectId: string, roomId: string): Promise<boolean> {
  const rooms: Record<string, unknown> = await import('#shared/db/room');
  const setRoomCoalesceUntil = rooms.setRoomCoalesceUntil;
  if (typeof setRoomCoalesceUntil !== 'function') return false;
  await setRoomCoalesceUntil(projectId, roomId, Date.now() + 10 * 60_000);
  await sleep(Number(runtime().env.CACHE_TTL_MS ?? 5000) + 250);
  return true;
}

/** A group room with a sender and `readers` members, each with a token of their own (SSE streams are limited per user). */
async function busyRoom(readers: number) {
  const owner = await newUser(project, 'owner');
  const members = await Promise.all(Array.from({ length: readers + 1 }, () => newUser(project, 'reader')));
  const [sender, ...others] = members as [Awaited<ReturnType<typeof newUser>>, ...Awaited<ReturnType<typeof newUser>>[]];
  const roomId = uniqueId('burst');
  const created = await api('/rooms', { token: owner.token, body: { id: roomId, type: 'group', members: members.map((m) => m.userId) } });
  if (created.status !== 201) throw new Error(`room creation failed: ${created.status}`);
  const coalesced = await markRoomCoalesced(project.projectId, roomId);
  const seed = await post(roomId, sender.token, 'before the burst');
  return { roomId, sender, readers: others, seed, coalesced };
}

async function post(roomId: string, token: string, content: string): Promise<Message> {
  const created = await api<{ message?: Message } & Message>(`/rooms/${roomId}/messages`, { token, body: { content } });
  if (created.status !== 201) throw new Error(`send failed: ${created.status} ${JSON.stringify(created.body)}`);
  return (created.body.message ?? created.body) as Message;
}

/**
 * Sends the burst in the background, one message after the other (each stored before the next is
 * sent, so ids rise with the send order and none is a late write), `BURST_GAP_MS` apart.
 */
function startBurst(roomId: string, token: string) {
  const sent: Message[] = [];
  const done = (async () => {
    for (let index = 0; index < BURST; index += 1) {
      const started = Date.now();
      sent.push(await post(roomId, token, `burst ${index}`));
      await sleep(Math.max(0, BURST_GAP_MS - (Date.now() - started)));
    }
    return sent;
  })();
  return { sent, done };
}

async function until(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

const ids = (messages: readonly Message[]) => messages.map((message) => message.id);
const ascending = (values: readonly number[]) => [...values].sort((a, b) => a - b);
const messageIds = (sse: SseStream) => sse.events.filter((event) => event.event === 'message').map((event) => Number(event.id));

describe('the routes, read as a client without the SDK would', { timeout: BURST_TEST_TIMEOUT_MS }, () => {
  it('SSE, cut mid-burst and resumed with Last-Event-ID, delivers every message once, in id order', async () => {
    // Prepare
    const { roomId, sender, readers, seed } = await busyRoom(1);
    const reader = readers[0]?.token as string;
    const path = `/rooms/${roomId}/stream`;
    const first = await openSse(path, { token: reader, headers: { 'last-event-id': String(seed.id) } });
    await first.started();

    // Act
    const burst = startBurst(roomId, sender.token);
    await first.next((event) => event.event === 'message', 10_000);
    first.close();
    const sentAtCut = burst.sent.length;
    const beforeCut = messageIds(first);
    const resumed = await openSse(path, { token: reader, headers: { 'last-event-id': String(beforeCut.at(-1)) } });
    const sent = await burst.done;
    await resumed.next(() => messageIds(resumed).includes(sent.at(-1)?.id as number), 10_000);
    resumed.close();

    // Assess
    expect(sentAtCut).toBeLessThan(BURST);
    const delivered = [...beforeCut, ...messageIds(resumed)];
    expect(delivered).toEqual(ids(sent));
    expect(delivered).toEqual(ascending(delivered));
    expect(resumed.events.filter((event) => event.event === 'message').map(dataOf)).toEqual(sent.filter((m) => !beforeCut.includes(m.id)));
  });

  it('polling with the after= cursor, paused mid-burst and in short pages, delivers every message once, in id order', async () => {
    // Prepare
    const { roomId, sender, readers, seed } = await busyRoom(1);
    const reader = readers[0]?.token as string;
    const delivered: Message[] = [];
    let cursor = seed.id;
    const poll = async () => {
      for (;;) {
        const page = await api<{ messages: Message[]; hasMore: boolean }>(`/rooms/${roomId}/messages?after=${cursor}&limit=7`, {
          token: reader,
        });
        expect(page.status).toBe(200);
        delivered.push(...page.body.messages);
        cursor = page.body.messages.at(-1)?.id ?? cursor;
        if (!page.body.hasMore) return;
      }
    };

    // Act
    const burst = startBurst(roomId, sender.token);
    await until('the first messages', () => burst.sent.length >= 10);
    await poll();
    const sentAtPause = burst.sent.length;
    await sleep(500);
    let finished = false;
    void burst.done.then(() => {
      finished = true;
    });
    while (!finished) {
      await poll();
      await sleep(100);
    }
    await poll();

    // Assess
    expect(sentAtPause).toBeLessThan(BURST);
    const sent = await burst.done;
    expect(ids(delivered)).toEqual(ids(sent));
    expect(delivered).toEqual(sent);
  });
});

/** A `fetch` whose SSE streams and polls the test can break: the SDK sees a dropped stream or a failed poll. */
function breakableFetch() {
  const streams: { readonly lastEventId: string | undefined; readonly cut: () => void }[] = [];
  let failNextPoll = false;
  const fetchLike: FetchLike = async (input, init) => {
    const url = new URL(input);
    if (url.searchParams.has('after') && failNextPoll) {
      failNextPoll = false;
      throw new TypeError('fetch failed (cut by the test)');
    }
    const response = await fetch(input, init);
    if (!url.pathname.endsWith('/stream') || !response.body) return response;
    const reader = response.body.getReader();
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (started) => {
        controller = started;
      },
      pull: async (pulling) => {
        try {
          const { value, done } = await reader.read();
          if (done) pulling.close();
          else pulling.enqueue(value);
        } catch (error) {
          pulling.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    const headers = new Headers(init?.headers);
    streams.push({
      lastEventId: headers.get('last-event-id') ?? undefined,
      cut: () => {
        controller?.error(new TypeError('terminated (cut by the test)'));
        void reader.cancel().catch(() => undefined);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return {
    fetch: fetchLike,
    streams,
    failNextPoll: () => {
      failNextPoll = true;
    },
  };
}

/** The state a client reaches when its one transport opens. */
const OPEN_STATE = { websocket: 'connected', sse: 'sse', polling: 'polling' } as const;

describe('the SDK over each transport', { timeout: BURST_TEST_TIMEOUT_MS }, () => {
  it('delivers the burst once, in id order, on WebSocket, SSE and polling, across a dropped stream and a failed poll', async () => {
    // Prepare
    const { roomId, sender, readers, seed } = await busyRoom(3);
    const breakable = breakableFetch();
    const clients: {
      readonly transport: Transport;
      readonly client: RoomClient;
      readonly messages: Message[];
      readonly states: string[];
    }[] = [];
    const transports: Transport[] = ['websocket', 'sse', 'polling'];
    for (const [index, transport] of transports.entries()) {
      const client = createRoomClient({
        baseUrl: runtime().baseUrl,
        roomId,
        token: readers[index]?.token as string,
        WebSocket,
        transports: [transport],
        history: 1,
        pollIntervalMs: 200,
        backoff: { baseBackoffMs: 50, maxBackoffMs: 200 },
        fetch: breakable.fetch,
      });
      const messages: Message[] = [];
      const states: string[] = [];
      client.on('message', (message) => messages.push(message));
      client.on('state', (state) => states.push(state));
      clients.push({ transport, client, messages, states });
    }
    try {
      await until('every client on its transport with the seed', () =>
        clients.every(
          ({ transport, client, messages }) => client.state === OPEN_STATE[transport] && messages.some((m) => m.id === seed.id),
        ),
      );

      // Act
      const burst = startBurst(roomId, sender.token);
      const overSse = clients[1] as (typeof clients)[number];
      const overPolling = clients[2] as (typeof clients)[number];
      await until('the first burst messages over SSE and polling', () => overSse.messages.length > 1 && overPolling.messages.length > 1);
      breakable.streams.at(-1)?.cut();
      breakable.failNextPoll();
      const sentAtCut = burst.sent.length;
      const sent = await burst.done;
      const last = sent.at(-1)?.id as number;
      await until('the whole burst on every client', () => clients.every(({ messages }) => messages.some((m) => m.id === last)));
      await sleep(500);

      // Assess
      expect(sentAtCut).toBeLessThan(BURST);
      expect(breakable.streams.length).toBeGreaterThanOrEqual(2);
      expect(Number(breakable.streams.at(-1)?.lastEventId)).toBeGreaterThan(0);
      // Both were interrupted and came back on their own transport; the WebSocket never dropped.
      expect(overSse.states.slice(-2)).toEqual(['reconnecting', 'sse']);
      expect(overPolling.states.slice(-2)).toEqual(['reconnecting', 'polling']);
      expect(clients[0]?.states).not.toContain('reconnecting');
      for (const { transport, messages } of clients) {
        expect({ transport, ids: ids(messages) }).toEqual({ transport, ids: [seed.id, ...ids(sent)] });
      }
    } finally {
      for (const { client } of clients) client.close();
    }
  });
});
