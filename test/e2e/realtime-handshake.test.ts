import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { api } from '../support/api';
import { projectBeforeAll, realtimeSuite, settle } from '../support/realtime-suite';
import { connect, connectWelcomed, isLastOpeningFrame, type SocketOptions, tryConnect, tryConnectUser } from '../support/ws';

/**
 * The WebSocket handshake of both channels (who is refused, with what) and the opening frames a
 * room connection gets right after the upgrade: connected, subscription_succeeded, history and,
 * with `cache=1`, the cached server event or cache_miss.
 */

const { project, track, user, room } = realtimeSuite('realtime-handshake');
const other = projectBeforeAll('realtime-handshake-other');

const sign = (claims: Record<string, unknown>, secret: string, expiresAt: number | string) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(expiresAt).sign(new TextEncoder().encode(secret));
const expired = (userId: string) =>
  sign({ projectId: project.projectId, userId }, project.signingSecret, Math.floor(Date.now() / 1000) - 30);

describe('the room channel handshake', () => {
  describe.each([
    { variant: 'an expired token', token: (_roomId: string, memberId: string) => expired(memberId), status: 401, code: 'token_expired' },
    { variant: 'a token that is not a JWT', token: async () => 'bad.token.here', status: 401, code: 'invalid_token' },
    {
      variant: "a member's id signed with another secret",
      token: (_roomId: string, memberId: string) =>
        sign({ projectId: project.projectId, userId: memberId }, 'not-the-project-secret-0123456789', '5m'),
      status: 401,
      code: 'invalid_token',
    },
    { variant: 'a non-member of the group room', token: async () => (await user('outsider')).token, status: 403, code: 'not_a_member' },
    {
      variant: "another project's token for the same user id",
      token: (_roomId: string, memberId: string) => other.token(memberId),
      status: 404,
      code: 'room_not_found',
    },
  ])('with $variant', ({ token, status, code }) => {
    it(`is refused with ${status} ${code} before the upgrade`, async () => {
      // Prepare
      const member = await user('member');
      const { roomId } = await room('group', [member.userId]);

      // Act
      const handshake = await tryConnect(roomId, await token(roomId, member.userId));

      // Assess
      expect(handshake).toMatchObject({ open: false, status, body: { error: { code } } });
    });
  });

  it.each([
    { query: { history: 101 }, field: 'query.history' },
    { query: { history: 'lots' }, field: 'query.history' },
    { query: { history: -1 }, field: 'query.history' },
    { query: { cache: 'yes' }, field: 'query.cache' },
  ] as { query: SocketOptions; field: string }[])('is refused with 400 naming $field for $query', async ({ query, field }) => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const handshake = await tryConnect(roomId, owner.token, query);

    // Assess
    expect(handshake).toMatchObject({ open: false, status: 400, body: { error: { code: 'validation_failed' } } });
    if (!handshake.open) expect(handshake.body.error.details).toContainEqual(expect.objectContaining({ field }));
  });

  it.each([
    { role: 'member', roles: undefined, joinedAs: 'member' },
    { role: 'guest', roles: ['guest'], joinedAs: 'guest' },
  ])('admits a project $role to a public room and adds them to its members as $joinedAs', async ({ roles, joinedAs }) => {
    // Prepare
    const { roomId } = await room('public');
    const visitor = await user('visitor', roles);

    // Act
    const socket = track(await connectWelcomed(roomId, visitor.token));

    // Assess
    expect(socket.isOpen).toBe(true);
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toContainEqual(expect.objectContaining({ userId: visitor.userId, role: joinedAs }));
  });
});

describe('the user channel handshake', () => {
  it("admits the token's own user and says connected with channel user", async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const handshake = await tryConnectUser(alice.userId, alice.token);

    // Assess
    expect(handshake.open).toBe(true);
    if (!handshake.open) return;
    const socket = track(handshake.socket);
    const connected = await socket.next((frame) => frame.type === 'connected');
    expect(connected).toEqual({ type: 'connected', socketId: expect.any(String), channel: 'user', userId: alice.userId });
    await settle(socket);
    expect(socket.frames.map((frame) => frame.type)).toEqual(['connected', 'pong']);
  });

  describe.each([
    { variant: "another user's token", token: async () => (await user('mallory')).token, status: 403, code: 'forbidden' },
    { variant: "another user's admin token", token: async () => (await user('admin', ['admin'])).token, status: 403, code: 'forbidden' },
    { variant: 'no token', token: async () => undefined, status: 401, code: 'missing_credentials' },
    { variant: 'an expired token of the user', token: (userId: string) => expired(userId), status: 401, code: 'token_expired' },
  ])('with $variant', ({ token, status, code }) => {
    it(`is refused with ${status} ${code}`, async () => {
      // Prepare
      const alice = await user('alice');

      // Act
      const handshake = await tryConnectUser(alice.userId, await token(alice.userId));

      // Assess
      expect(handshake).toMatchObject({ open: false, status, body: { error: { code } } });
    });
  });

  it('only receives: a message frame gets unsupported_frame and the connection stays open', async () => {
    // Prepare
    const alice = await user('alice');
    const handshake = await tryConnectUser(alice.userId, alice.token);
    if (!handshake.open) throw new Error('refused');
    const socket = track(handshake.socket);
    await socket.socketId();

    // Act
    socket.send({ type: 'message', content: 'to nobody' });
    const error = await socket.next((frame) => frame.type === 'error');

    // Assess
    expect(error).toMatchObject({ error: { code: 'unsupported_frame' } });
    await settle(socket);
    expect(socket.isOpen).toBe(true);
  });
});

describe('the opening frames of a room connection', () => {
  it('are connected, subscription_succeeded and history (default 20, oldest first), in this order', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const imported = await api('/admin/messages/import/batch', {
      apiKey: project.apiKey,
      body: { messages: Array.from({ length: 22 }, (_, i) => ({ roomId, userId: 'legacy', content: `old ${i}` })) },
    });
    const ids = imported.body.results.map((result: any) => result.message.id as number);

    // Act
    const socket = track(await connectWelcomed(roomId, owner.token));
    await settle(socket);

    // Assess
    const [connected, snapshot, history, ...rest] = socket.frames;
    expect(connected).toEqual({ type: 'connected', socketId: expect.any(String), channel: 'room', roomId, userId: owner.userId });
    expect(snapshot).toEqual({ type: 'subscription_succeeded', roomId, members: [owner.userId], subscriptionCount: 1 });
    expect(history).toMatchObject({ type: 'history', roomId, hasMore: true });
    expect(history?.messages.map((message: any) => message.id)).toEqual(ids.slice(2));
    expect(history?.messages[0]).toMatchObject({ roomId, userId: 'legacy', content: 'old 2' });
    expect(rest.map((frame) => frame.type)).toEqual(['pong']);
  });

  it('carry the last N messages with history=N', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const posted = [];
    for (const content of ['one', 'two', 'three', 'four', 'five']) {
      posted.push((await api('/messages', { token: owner.token, body: { roomId, content } })).body);
    }

    // Act
    const three = track(await connectWelcomed(roomId, owner.token, { history: 3 }));
    const all = track(await connectWelcomed(roomId, owner.token, { history: 5 }));

    // Assess
    expect(three.ofType('history')).toEqual([{ type: 'history', roomId, messages: posted.slice(2), hasMore: true }]);
    expect(all.ofType('history')).toEqual([{ type: 'history', roomId, messages: posted, hasMore: false }]);
  });

  it('skip the history frame with history=0', async () => {
    // Prepare
    const { owner, roomId } = await room();
    await api('/messages', { token: owner.token, body: { roomId, content: 'not replayed' } });

    // Act
    const socket = track(await connectWelcomed(roomId, owner.token, { history: 0 }));
    await settle(socket);

    // Assess
    expect(socket.frames.map((frame) => frame.type)).toEqual(['connected', 'subscription_succeeded', 'pong']);
  });

  it('end with cache_miss on a room without a cached event (cache=1)', async () => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const socket = track(await connectWelcomed(roomId, owner.token, { cache: true }));
    await settle(socket);

    // Assess
    expect(socket.frames.map((frame) => frame.type)).toEqual(['connected', 'subscription_succeeded', 'history', 'cache_miss', 'pong']);
    expect(socket.ofType('cache_miss')).toEqual([{ type: 'cache_miss', roomId }]);
  });

  it("end with the room's last POST /events event, marked cached, after one (cache=1)", async () => {
    // Prepare
    const { owner, roomId } = await room();
    const first = await api('/events', { token: owner.token, body: { roomIds: [roomId], name: 'score', data: { home: 1 } } });
    const second = await api('/events', { token: owner.token, body: { roomIds: [roomId], name: 'score', data: { home: 2 } } });

    // Act
    const socket = track(await connectWelcomed(roomId, owner.token, { cache: true, history: 0 }));
    await settle(socket);

    // Assess
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(socket.frames.map((frame) => frame.type)).toEqual(['connected', 'subscription_succeeded', 'event', 'pong']);
    expect(socket.ofType('event')).toEqual([
      { type: 'event', roomId, event: 'score', data: { home: 2 }, userId: owner.userId, cached: true },
    ]);
  });

  it('do not replay the cached event without cache=1', async () => {
    // Prepare
    const { owner, roomId } = await room();
    await api('/events', { apiKey: project.apiKey, body: { roomIds: [roomId], name: 'score', data: { home: 3 } } });

    // Act
    const socket = track(await connect(roomId, owner.token));
    await socket.next(isLastOpeningFrame());
    await settle(socket);

    // Assess
    expect(socket.frames.map((frame) => frame.type)).toEqual(['connected', 'subscription_succeeded', 'history', 'pong']);
  });

  it('give each connection its own socket id', async () => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const first = track(await connect(roomId, owner.token));
    const second = track(await connect(roomId, owner.token));

    // Assess
    const [a, b] = await Promise.all([first.socketId(), second.socketId()]);
    expect(a).not.toBe(b);
  });
});
