import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { settle, trackSockets } from '../support/realtime-suite';
import { openSse } from '../support/sse';
import { connectUser, connectWelcomed, tryConnect } from '../support/ws';

/**
 * Realtime across tenants: project B's credentials cannot connect to a room of A, post events
 * into it or receive from it, even where B has a room with the same id and users with the same ids.
 */

let a: TestProject;
let b: TestProject;
const sharedUserId = uniqueId('bob');
let aToken: string;
let bToken: string;
let bAdmin: string;

beforeAll(async () => {
  [a, b] = await Promise.all([createTestProject('realtime-tenant-a'), createTestProject('realtime-tenant-b')]);
  [aToken, bToken, bAdmin] = await Promise.all([a.token(sharedUserId), b.token(sharedUserId), b.token(uniqueId('b-admin'), ['admin'])]);
});

/** A group room with the same id in both projects, each owned by the shared user id. */
async function sameRoomInBoth() {
  const roomId = uniqueId('same-room');
  await api('/rooms', { token: aToken, body: { id: roomId, type: 'group' } });
  await api('/rooms', { token: bToken, body: { id: roomId, type: 'group' } });
  return roomId;
}

const track = trackSockets();

describe("project B against project A's room", () => {
  it("cannot connect to A's room that B lacks (404), and reaches only B's own room of the same id", async () => {
    // Prepare
    const roomId = await sameRoomInBoth();
    const aOnly = uniqueId('a-only');
    await api('/rooms', { token: aToken, body: { id: aOnly, type: 'public' } });

    // Act
    const refused = await tryConnect(aOnly, bToken);
    const bSocket = track(await connectWelcomed(roomId, bToken, { history: 0 }));

    // Assess
    expect(refused).toMatchObject({ open: false, status: 404, body: { error: { code: 'room_not_found' } } });
    expect(bSocket.ofType('subscription_succeeded')).toEqual([
      { type: 'subscription_succeeded', roomId, members: [sharedUserId], subscriptionCount: 1 },
    ]);
  });

  it("posts no event into A's room: POST /events skips it for every caller of B, and only B's room of that id hears B", async () => {
    // Prepare
    const roomId = await sameRoomInBoth();
    const aOnly = uniqueId('a-only');
    await api('/rooms', { token: aToken, body: { id: aOnly, type: 'public' } });
    const aSocket = track(await connectWelcomed(roomId, aToken, { history: 0 }));
    const aOnlySocket = track(await connectWelcomed(aOnly, aToken, { history: 0 }));
    const bSocket = track(await connectWelcomed(roomId, bToken, { history: 0 }));

    // Act
    const responses = await Promise.all(
      [{ token: bToken }, { token: bAdmin }, { apiKey: b.apiKey }].map((auth) =>
        api('/events', { ...auth, body: { roomIds: [aOnly, roomId], name: 'from-b', data: { tenant: 'b' } } }),
      ),
    );
    await bSocket.next(() => bSocket.ofType('event').length >= 3);
    await settle(aSocket);
    await settle(aOnlySocket);

    // Assess
    for (const response of responses) {
      expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: [roomId], skipped: [aOnly] } });
    }
    expect(aSocket.ofType('event')).toEqual([]);
    expect(aOnlySocket.ofType('event')).toEqual([]);
    const aReplay = track(await connectWelcomed(aOnly, aToken, { history: 0, cache: true }));
    expect(aReplay.ofType('cache_miss')).toHaveLength(1);
  });

  it("receives nothing of A's room: messages, client events, presence and user events of A stay in A", async () => {
    // Prepare
    const roomId = await sameRoomInBoth();
    const bRoom = track(await connectWelcomed(roomId, bToken, { history: 0 }));
    const bChannel = track(await connectUser(sharedUserId, bToken));
    const aRoom = track(await connectWelcomed(roomId, aToken, { history: 0 }));
    const aPeer = track(await connectWelcomed(roomId, aToken, { history: 0 }));
    await aRoom.next((frame) => frame.type === 'subscription_count');

    // Act
    await api('/messages', { token: aToken, body: { roomId, content: 'A only' } });
    aRoom.send({ type: 'client-typing', data: { tenant: 'a' } });
    await aPeer.next((frame) => frame.type === 'event');
    await api('/events', { apiKey: a.apiKey, body: { roomIds: [roomId], name: 'a-event' } });
    await api(`/users/${sharedUserId}/events`, { apiKey: a.apiKey, body: { name: 'a-note' } });
    await aPeer.next((frame) => frame.type === 'event' && frame.event === 'a-event');
    await settle(bRoom);
    await settle(bChannel);

    // Assess
    expect(bRoom.frames.map((frame) => frame.type)).toEqual(['connected', 'subscription_succeeded', 'pong']);
    expect(bChannel.frames.map((frame) => frame.type)).toEqual(['connected', 'pong']);
  });

  it("cannot stream A's room over SSE (404) nor read it by polling", async () => {
    // Prepare
    const aOnly = uniqueId('a-only');
    await api('/rooms', { token: aToken, body: { id: aOnly, type: 'public' } });

    // Act
    const sse = await openSse(`/rooms/${aOnly}/stream`, { token: bToken });
    sse.close();
    const polled = await api(`/rooms/${aOnly}/messages?after=0`, { token: bToken });

    // Assess
    expect({ status: sse.status, code: sse.body?.error?.code }).toEqual({ status: 404, code: 'room_not_found' });
    expect({ status: polled.status, code: polled.body?.error?.code }).toEqual({ status: 404, code: 'room_not_found' });
  });

  it("cannot close A's connections of a user with the same id", async () => {
    // Prepare: a user id of A that B has never connected with
    const carol = uniqueId('carol');
    const carolToken = await a.token(carol);
    const aRoomId = uniqueId('a-room');
    await api('/rooms', { token: carolToken, body: { id: aRoomId, type: 'group' } });
    const aSocket = track(await connectWelcomed(aRoomId, carolToken, { history: 0 }));
    const aChannel = track(await connectUser(carol, carolToken));

    // Act
    const response = await api(`/users/${carol}/connections`, { apiKey: b.apiKey, method: 'DELETE' });
    await settle(aSocket);
    await settle(aChannel);

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { closed: 0 } });
    expect(aSocket.isOpen && aChannel.isOpen).toBe(true);
  });
});
