import { describe, expect, it } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';
import { openSse } from '../../support/sse';
import { connectUser, connectWelcomed, type RoomSocket, tryConnect } from '../../support/ws';

/** Project A against project B on the Realtime area's routes (the SSE stream, events, connections, watchlists) and the WebSocket; the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

describeTenantMatrix('Realtime', tenants, {
  async StreamRoom({ aAdmin, aMember, bRooms }) {
    // Act
    const attempts = await Promise.all(
      [aAdmin, aMember].flatMap((token) =>
        bRooms().map(async (roomId) => {
          const sse = await openSse(`/rooms/${roomId}/stream`, { token });
          sse.close();
          return { roomId, status: sse.status, code: sse.body?.error?.code };
        }),
      ),
    );

    // Assess
    for (const attempt of attempts) expect(attempt).toEqual({ roomId: attempt.roomId, status: 404, code: 'room_not_found' });
  },

  async PublishEvents({ b, aMember, bMember, bRoomId, aRoomId, aCallers, bRooms }) {
    // Prepare: B listens on its room, with B's cached event in place
    await api('/events', { apiKey: b.apiKey, body: { roomIds: [bRoomId], name: 'b-cached' } });
    const bSocket = await connectWelcomed(bRoomId, bMember, { history: 0 });

    try {
      // Act
      const responses = await Promise.all(
        [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) =>
          api('/events', { ...auth, body: { roomIds: [...bRooms(), aRoomId], name: 'from-a' } }),
        ),
      );
      await api('/events', { apiKey: b.apiKey, body: { roomIds: [bRoomId], name: 'b-marker' } });
      await bSocket.next((frame) => frame.event === 'b-marker');

      // Assess: B's rooms are skipped like rooms that do not exist; B heard and cached only B
      for (const response of responses) {
        expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: [aRoomId], skipped: bRooms() } });
      }
      expect(bSocket.ofType('event').map((frame) => frame.event)).toEqual(['b-marker']);
    } finally {
      await bSocket.close();
    }
    const replay = await connectWelcomed(bRoomId, bMember, { history: 0, cache: true });
    await replay.close();
    expect(replay.ofType('event')).toMatchObject([{ event: 'b-marker', cached: true }]);
  },

  async PublishUserEvent({ b, sharedUserId, bMember, aCallers }) {
    // Prepare: B's user with the shared id listens on B's user channel
    const bChannel = await connectUser(sharedUserId, bMember);

    try {
      // Act
      const responses = await Promise.all(
        aCallers().map(({ auth }) => api(`/users/${sharedUserId}/events`, { ...auth, body: { name: 'from-a', data: {} } })),
      );
      await api(`/users/${sharedUserId}/events`, { apiKey: b.apiKey, body: { name: 'b-marker' } });
      await bChannel.next((frame) => frame.event === 'b-marker');

      // Assess: A reaches A's user of that id (who has no connection), never B's
      for (const response of responses)
        expect({ status: response.status, body: response.body }).toEqual({ status: 202, body: { sent: 0 } });
      expect(bChannel.ofType('notification').map((frame) => frame.event)).toEqual(['b-marker']);
    } finally {
      await bChannel.close();
    }
  },

  async CloseUserConnections({ sharedUserId, bMember, bRoomId, aCallers }) {
    // Prepare
    const bSockets: RoomSocket[] = [await connectWelcomed(bRoomId, bMember, { history: 0 }), await connectUser(sharedUserId, bMember)];

    try {
      // Act
      const responses = await Promise.all(
        aCallers().map(({ auth }) => api(`/users/${sharedUserId}/connections`, { ...auth, method: 'DELETE' })),
      );
      for (const socket of bSockets) {
        socket.send({ type: 'ping' });
        await socket.next((frame) => frame.type === 'pong');
      }

      // Assess
      for (const response of responses)
        expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { closed: 0 } });
      for (const socket of bSockets) expect(socket.isOpen).toBe(true);
    } finally {
      await Promise.all(bSockets.map((socket) => socket.close()));
    }
  },

  async ListWatchlist({ sharedUserId, bMember, bRoomId, aCallers }) {
    // Prepare
    await api(`/users/${sharedUserId}/watchlist`, { token: bMember, body: { type: 'room', targetId: bRoomId } });

    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api(`/users/${sharedUserId}/watchlist`, auth)));

    // Assess
    for (const list of lists) expect(JSON.stringify(list.body)).not.toContain(bRoomId);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body.targets.map((t: any) => t.targetId)).toContain(bRoomId);
  },

  async AddWatchlistTarget({ a, sharedUserId, bMember, aCallers, bRooms }) {
    // Prepare
    const bBefore = (await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body;

    // Act + Assess: B's rooms do not exist for A
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/users/${sharedUserId}/watchlist`, { ...auth, body: { type: 'room', targetId: roomId } }),
        })),
      ),
    );
    const byUser = await api(`/users/${sharedUserId}/watchlist`, { apiKey: a.apiKey, body: { type: 'user', targetId: 'b-friend' } });
    expect(byUser.status).toBe(201);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body).toEqual(bBefore);
  },

  async RemoveWatchlistTarget({ sharedUserId, bMember, bRoomId, aCallers }) {
    // Prepare
    await api(`/users/${sharedUserId}/watchlist`, { token: bMember, body: { type: 'room', targetId: bRoomId } });

    // Act
    const responses = await Promise.all(
      aCallers().map(({ auth }) =>
        api(`/users/${sharedUserId}/watchlist`, { ...auth, method: 'DELETE', body: { type: 'room', targetId: bRoomId } }),
      ),
    );

    // Assess: a 204 in A's own (empty) list; B's list keeps the room
    for (const response of responses) expect(response.status).toBe(204);
    expect((await api(`/users/${sharedUserId}/watchlist`, { token: bMember })).body.targets.map((t: any) => t.targetId)).toContain(bRoomId);
  },
});

describe('tenant isolation beyond the HTTP routes', () => {
  it("refuses a WebSocket to B's rooms with A's token (404)", async () => {
    const { aMember, bRooms } = tenants();
    // Act
    const handshakes = await Promise.all(bRooms().map((roomId) => tryConnect(roomId, aMember)));

    // Assess
    for (const handshake of handshakes) expect(handshake).toMatchObject({ open: false, status: 404 });
  });
});
