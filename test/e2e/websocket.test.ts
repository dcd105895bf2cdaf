import { request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { SignJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { connect, type RoomSocket, tryConnect, tryOpen } from '../support/ws';

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('websocket');
});

const open: RoomSocket[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((socket) => socket.close()));
});

async function join(roomId: string, token: string) {
  const socket = await connect(roomId, token);
  open.push(socket);
  return socket;
}

const user = (prefix?: string, roles?: string[]) => newUser(project, prefix, roles);

async function room(type: 'group' | 'public' = 'group', members: string[] = []) {
  const owner = await user('owner');
  const roomId = uniqueId('room');
  await api('/rooms', { token: owner.token, body: { id: roomId, type, members } });
  return { owner, roomId };
}

/**
 * A removal reaches the member's sockets through its event (`room.member_left`, handled by the
 * realtime subscriber), an event's latency after the 204: waits for that, bounded.
 */
async function closedWithin(socket: RoomSocket, timeoutMs = 10_000) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the socket was still open ${timeoutMs} ms after the removal`)), timeoutMs);
  });
  try {
    return await Promise.race([socket.closed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const history = async (roomId: string) => (await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey })).body.messages as any[];

describe('the WebSocket handshake', () => {
  it('admits a room member', async () => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const handshake = await tryConnect(roomId, owner.token);

    // Assess
    expect(handshake.open).toBe(true);
    if (handshake.open) open.push(handshake.socket);
  });

  it('admits a project member to a public room and adds them to its members', async () => {
    // Prepare
    const { roomId } = await room('public');
    const bob = await user('bob');

    // Act
    const handshake = await tryConnect(roomId, bob.token);

    // Assess
    expect(handshake.open).toBe(true);
    if (handshake.open) open.push(handshake.socket);
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toContainEqual(expect.objectContaining({ userId: bob.userId, role: 'member' }));
  });

  describe.each([
    { variant: 'no token', token: async () => undefined, status: 401, code: 'missing_credentials' },
    { variant: 'a malformed token', token: async () => 'not.a.jwt', status: 401, code: 'invalid_token' },
    {
      variant: 'an expired token',
      token: () =>
        new SignJWT({ projectId: project.projectId, userId: 'late' })
          .setProtectedHeader({ alg: 'HS256' })
          .setExpirationTime(Math.floor(Date.now() / 1000) - 30)
          .sign(new TextEncoder().encode(project.signingSecret)),
      status: 401,
      code: 'token_expired',
    },
    {
      variant: 'a token signed with another secret',
      token: () =>
        new SignJWT({ projectId: project.projectId, userId: 'forger' })
          .setProtectedHeader({ alg: 'HS256' })
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode('some-other-secret-0123456789abcdef')),
      status: 401,
      code: 'invalid_token',
    },
    { variant: 'a non-member token', token: async () => (await user('outsider')).token, status: 403, code: 'not_a_member' },
    { variant: 'a non-member admin token', token: async () => (await user('admin', ['admin'])).token, status: 403, code: 'not_a_member' },
  ])('with $variant', ({ token, status, code }) => {
    it(`is refused with HTTP ${status} ${code}, without upgrading`, async () => {
      // Prepare
      const { roomId } = await room();

      // Act
      const handshake = await tryConnect(roomId, await token());

      // Assess
      expect(handshake).toMatchObject({ open: false, status, body: { error: { code } } });
    });
  });

  it('is refused with 404 room_not_found for an unknown room', async () => {
    // Prepare
    const bob = await user('bob');

    // Act
    const handshake = await tryConnect(uniqueId('missing'), bob.token);

    // Assess
    expect(handshake).toMatchObject({ open: false, status: 404, body: { error: { code: 'room_not_found' } } });
  });

  it('is refused with 400 for an invalid room id', async () => {
    // Prepare
    const bob = await user('bob');

    // Act
    const handshake = await tryConnect('bad#room', bob.token);

    // Assess
    expect(handshake).toMatchObject({ open: false, status: 400 });
  });

  it('refuses a member who left the room', async () => {
    // Prepare
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId]);
    await api(`/rooms/${roomId}/members/${bob.userId}`, { method: 'DELETE', token: bob.token });

    // Act
    const handshake = await tryConnect(roomId, bob.token);

    // Assess
    expect(handshake).toMatchObject({ open: false, status: 403 });
  });
});

describe('message frames', () => {
  it('store the message, ack the sender and broadcast to the other members', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await room('group', [bob.userId]);
    const aliceSocket = await join(roomId, owner.token);
    const bobSocket = await join(roomId, bob.token);

    // Act
    aliceSocket.send({ type: 'message', content: 'hi over ws', clientMessageId: 'c-1' });
    const ack = await aliceSocket.next((frame) => frame.type === 'ack');
    const delivered = await bobSocket.next((frame) => frame.type === 'message');

    // Assess
    expect(ack).toEqual({
      type: 'ack',
      clientMessageId: 'c-1',
      created: true,
      message: expect.objectContaining({ roomId, userId: owner.userId, content: 'hi over ws', clientMessageId: 'c-1' }),
    });
    expect(delivered).toEqual({ type: 'message', message: ack.message });
    expect(await history(roomId)).toEqual([ack.message]);
    expect(aliceSocket.frames.filter((frame) => frame.type === 'message')).toEqual([]);
  });

  it('ack with clientMessageId null when none was given', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);

    // Act
    socket.send({ type: 'message', content: 'no id' });
    const ack = await socket.next((frame) => frame.type === 'ack');

    // Assess
    expect(ack).toMatchObject({ type: 'ack', clientMessageId: null, created: true, message: { content: 'no id' } });
  });

  it('are idempotent on clientMessageId: a repeat is acked with created false and the original', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);
    socket.send({ type: 'message', content: 'once', clientMessageId: 'dup' });
    const first = await socket.next((frame) => frame.type === 'ack');

    // Act
    socket.send({ type: 'message', content: 'once', clientMessageId: 'dup' });
    const second = await socket.next((frame) => frame.type === 'ack' && frame !== first);

    // Assess
    expect(second).toEqual({ type: 'ack', clientMessageId: 'dup', created: false, message: first.message });
    expect(await history(roomId)).toHaveLength(1);
  });

  it("accept the socket's own roomId, as POST /messages carries it", async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);

    // Act
    socket.send({ type: 'message', roomId, content: 'shaped like POST /messages', clientMessageId: 'with-room' });
    const ack = await socket.next((frame) => frame.type === 'ack');

    // Assess
    expect(ack).toMatchObject({ clientMessageId: 'with-room', created: true, message: { roomId, content: 'shaped like POST /messages' } });
    expect(await history(roomId)).toEqual([ack.message]);
  });

  it('naming another room are refused with room_mismatch and store nothing in either room', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const other = await room();
    await api(`/rooms/${other.roomId}/members`, { token: other.owner.token, body: { userId: owner.userId } });
    const socket = await join(roomId, owner.token);

    // Act
    socket.send({ type: 'message', roomId: other.roomId, content: 'wrong room', clientMessageId: 'elsewhere' });
    const error = await socket.next((frame) => frame.type === 'error');

    // Assess
    expect(error).toMatchObject({
      clientMessageId: 'elsewhere',
      error: { code: 'room_mismatch', details: [{ field: 'roomId', message: expect.stringContaining(roomId) }] },
    });
    expect(socket.isOpen).toBe(true);
    expect(await history(roomId)).toEqual([]);
    expect(await history(other.roomId)).toEqual([]);
  });

  it('support replies with parent_id and attachments', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const parent = await api('/messages', { token: owner.token, body: { roomId, content: 'parent' } });
    const socket = await join(roomId, owner.token);

    // Act
    socket.send({ type: 'message', content: 'child', parent_id: parent.body.id, attachments: ['https://example.com/x.png'] });
    const ack = await socket.next((frame) => frame.type === 'ack');

    // Assess
    expect(ack.message).toMatchObject({ parent_id: parent.body.id, attachments: ['https://example.com/x.png'] });
  });

  it('reach the members of the room only', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const other = await room();
    const sender = await join(roomId, owner.token);
    const elsewhere = await join(other.roomId, other.owner.token);

    // Act
    sender.send({ type: 'message', content: 'room one only' });
    await sender.next((frame) => frame.type === 'ack');
    await api('/messages', { token: other.owner.token, body: { roomId: other.roomId, content: 'room two' } });
    const own = await elsewhere.next((frame) => frame.type === 'message');

    // Assess
    expect(own.message.content).toBe('room two');
    expect(elsewhere.frames.filter((frame) => frame.type === 'message').map((frame) => frame.message.content)).toEqual(['room two']);
  });

  it('carry emoji content', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);

    // Act
    socket.send({ type: 'message', content: 'ws 🎉', clientMessageId: 'emoji' });
    const reply = await socket.next((frame) => frame.clientMessageId === 'emoji');

    // Assess
    expect(reply).toMatchObject({ type: 'ack', created: true, message: { content: 'ws 🎉' } });
  });

  describe.each([
    { variant: 'not JSON', frame: '{nope', code: 'invalid_json' },
    { variant: 'an unknown type', frame: { type: 'typing' }, code: 'unsupported_frame' },
    { variant: 'no type', frame: { content: 'x' }, code: 'validation_failed' },
    { variant: 'a client event with a bad name', frame: { type: 'client-' }, code: 'validation_failed' },
    { variant: 'a client event whose data is not an object', frame: { type: 'client-typing', data: [1] }, code: 'validation_failed' },
    { variant: 'no content', frame: { type: 'message' }, code: 'validation_failed' },
    { variant: 'empty content', frame: { type: 'message', content: '' }, code: 'validation_failed' },
    { variant: 'content over 4000 characters', frame: { type: 'message', content: 'x'.repeat(4001) }, code: 'validation_failed' },
    { variant: 'an unknown field', frame: { type: 'message', content: 'x', room: 'elsewhere' }, code: 'validation_failed' },
    { variant: 'another room', frame: { type: 'message', content: 'x', roomId: 'elsewhere' }, code: 'room_mismatch' },
    { variant: 'an ftp attachment', frame: { type: 'message', content: 'x', attachments: ['ftp://x'] }, code: 'validation_failed' },
    {
      variant: 'an attachment URL holding NUL',
      frame: { type: 'message', content: 'x', attachments: ['https://cdn.example.com/a\u0000b'] },
      code: 'validation_failed',
    },
    {
      variant: 'a backdated createdAt',
      frame: { type: 'message', content: 'x', createdAt: '2020-01-01T00:00:00Z' },
      code: 'backdating_forbidden',
    },
    { variant: 'another author', frame: { type: 'message', content: 'x', userId: 'someone-else' }, code: 'backdating_forbidden' },
    { variant: 'an unknown parent', frame: { type: 'message', content: 'x', parent_id: 1 }, code: 'message_not_found' },
  ])('a frame with $variant', ({ frame, code }) => {
    it(`gets an error frame ${code}, stores nothing and keeps the connection open`, async () => {
      // Prepare
      const { owner, roomId } = await room();
      const socket = await join(roomId, owner.token);

      // Act
      socket.send(frame);
      const error = await socket.next((received) => received.type === 'error');

      // Assess
      expect(error).toMatchObject({ type: 'error', error: { code } });
      expect(await history(roomId)).toEqual([]);
      socket.send({ type: 'message', content: 'still here' });
      expect(await socket.next((received) => received.type === 'ack')).toMatchObject({ created: true });
    });
  });

  it('from a guest session that joined a public room are delivered', async () => {
    // Prepare
    const { owner, roomId } = await room('public');
    const guest = await user('guest', ['guest']);
    const ownerSocket = await join(roomId, owner.token);
    const guestSocket = await join(roomId, guest.token);

    // Act
    guestSocket.send({ type: 'message', content: 'guest says hi' });
    const delivered = await ownerSocket.next((frame) => frame.type === 'message');

    // Assess
    expect(delivered.message).toMatchObject({ userId: guest.userId, content: 'guest says hi' });
  });
});

describe('REST messages', () => {
  it('reach the WebSocket clients of the room', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await room('group', [bob.userId]);
    const bobSocket = await join(roomId, bob.token);
    const ownerSocket = await join(roomId, owner.token);

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'from REST' } });
    const toBob = await bobSocket.next((frame) => frame.type === 'message');
    const toOwner = await ownerSocket.next((frame) => frame.type === 'message');

    // Assess
    expect(toBob).toEqual({ type: 'message', message: posted.body });
    expect(toOwner).toEqual({ type: 'message', message: posted.body });
  });

  it('reach every connection of the room, imports and API-key posts included', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const first = await join(roomId, owner.token);
    const second = await join(roomId, owner.token);

    // Act
    const imported = await api('/admin/messages/import', { apiKey: project.apiKey, body: { roomId, userId: 'legacy', content: 'imp' } });
    const byKey = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { userId: 'bot', content: 'key' } });
    await first.next((frame) => frame.message?.id === byKey.body.id);
    await second.next((frame) => frame.message?.id === byKey.body.id);

    // Assess
    for (const socket of [first, second]) {
      expect(socket.frames.filter((frame) => frame.type === 'message').map((frame) => frame.message.id)).toEqual([
        imported.body.id,
        byKey.body.id,
      ]);
    }
  });

  it('stop reaching a member removed from a group room, even on a connection opened before', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await room('group', [bob.userId]);
    const bobSocket = await join(roomId, bob.token);
    const ownerSocket = await join(roomId, owner.token);
    expect((await api(`/rooms/${roomId}/members/${bob.userId}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
    await closedWithin(bobSocket);

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'not for bob any more' } });
    await ownerSocket.next((frame) => frame.message?.id === posted.body.id);
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Assess
    expect(bobSocket.frames.filter((frame) => frame.type === 'message')).toEqual([]);
  });

  it("close a removed member's sockets to that room once the removal is handled, and leave their other rooms' sockets open", async () => {
    // Prepare
    const bob = await user('bob');
    const left = await room('group', [bob.userId]);
    const kept = await room('group', [bob.userId]);
    const [leftSocket, secondLeftSocket, keptSocket] = [
      await join(left.roomId, bob.token),
      await join(left.roomId, bob.token),
      await join(kept.roomId, bob.token),
    ];
    const removed = await api(`/rooms/${left.roomId}/members/${bob.userId}`, { method: 'DELETE', token: left.owner.token });

    // Act
    await Promise.all([closedWithin(leftSocket), closedWithin(secondLeftSocket)]);
    const inLeft = await api('/messages', { token: left.owner.token, body: { roomId: left.roomId, content: 'after bob left' } });
    const inKept = await api('/messages', { token: kept.owner.token, body: { roomId: kept.roomId, content: 'bob is still here' } });
    const delivered = await keptSocket.next((frame) => frame.message?.id === inKept.body.id);

    // Assess
    expect(removed.status).toBe(204);
    expect([inLeft.status, inKept.status]).toEqual([201, 201]);
    expect(delivered.message.content).toBe('bob is still here');
    for (const socket of [leftSocket, secondLeftSocket]) expect(socket.frames.filter((frame) => frame.type === 'message')).toEqual([]);
  });

  it('stop reaching a socket once it is closed', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const leaving = await connect(roomId, owner.token);
    const staying = await join(roomId, owner.token);
    await leaving.close();

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'after close' } });
    await staying.next((frame) => frame.message?.id === posted.body.id);

    // Assess
    expect(posted.status).toBe(201);
    expect(leaving.frames.filter((frame) => frame.type === 'message')).toEqual([]);
  });
});

/** One masked client frame, written under `ws` so the test can send what `ws` itself would refuse to. */
function rawClientFrame(firstByte: number, payload: Buffer): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(payload.map((byte, index) => byte ^ (mask[index % 4] as number)));
  return Buffer.concat([Buffer.from([firstByte, 0x80 | payload.length]), mask, masked]);
}

describe('an upgrade the gateway refuses before any route runs', () => {
  it.each([
    { name: 'to a path no WebSocket route serves', path: '/ws/nowhere/at-all', status: 404, code: 'not_found' },
    { name: 'with a malformed percent-encoding', path: '/ws/rooms/%E0%A4%A', status: 400, code: 'invalid_path' },
    { name: 'whose request line is over 16 KB', path: `/ws/rooms/r?token=${'x'.repeat(20_000)}`, status: 431, code: 'headers_too_large' },
    { name: 'to a path that begins with two slashes', path: '//?limit=0', status: 404, code: 'not_found' },
  ])('($name) answers $status with the JSON error shape', async ({ path, status, code }) => {
    // Act
    const handshake = await tryOpen(`${runtime().wsUrl}${path}`);

    // Assess
    expect(handshake).toMatchObject({ open: false, status, body: { error: { code, message: expect.any(String) } } });
  });
});

describe('an HTTP request whose path begins with two slashes', () => {
  it('is a 404 in the JSON error shape, not a gateway failure (the fuzz suite found it)', async () => {
    // Act: a raw request line, as a client may send it (fetch would keep the path, a URL parser would not)
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(runtime().baseUrl);
      const request = httpRequest({ host: hostname, port, method: 'PATCH', path: '//?limit=0' }, (response) => {
        let body = '';
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.end();
    });

    // Assess
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    expect((await api('/health')).status).toBe(200);
  });
});

describe('a protocol error on one socket', () => {
  const cases: { name: string; code: number; offend: (socket: RoomSocket) => void }[] = [
    { name: 'a text frame over the 128 KB limit', code: 1009, offend: (socket) => socket.send('x'.repeat(200 * 1024)) },
    {
      name: 'a text frame that is not UTF-8',
      code: 1007,
      offend: (socket) => socket.socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false }),
    },
    {
      name: 'a frame with a reserved bit set',
      code: 1002,
      // FIN + RSV2 + text opcode: no extension was negotiated, so RSV2 is a protocol error.
      offend: (socket) => (socket.socket as unknown as { _socket: Socket })._socket.write(rawClientFrame(0xa1, Buffer.from('{}'))),
    },
  ];

  it.each(cases)('($name) closes that socket with $code and nothing else', async ({ code, offend }) => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await room('group', [bob.userId]);
    const offender = await join(roomId, bob.token);
    const bystander = await join(roomId, owner.token);
    await offender.socketId();

    // Act
    offend(offender);
    const closed = await offender.closed;

    // Assess
    expect(closed.code).toBe(code);
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'still here' } });
    expect(posted.status).toBe(201);
    await bystander.next((frame) => frame.message?.id === posted.body.id);
    expect(bystander.isOpen).toBe(true);
    expect((await api('/health')).status).toBe(200);
  });
});

describe('the local @connections management API', () => {
  const management = (connectionId: string, init: RequestInit) =>
    fetch(`${runtime().baseUrl}/@connections/${encodeURIComponent(connectionId)}`, init);
  const forged = JSON.stringify({ type: 'message', message: { content: 'forged' } });
  const credentialsOf = (accessKeyId: string) => ({
    authorization: `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20261125/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=00`,
  });

  it.each([
    { name: 'without credentials', headers: {}, errorType: 'ForbiddenException' },
    {
      name: "with an access key not the runtime's",
      headers: credentialsOf('AKIAEXAMPLE000000000'),
      errorType: 'UnrecognizedClientException',
    },
  ])('refuses a post or delete $name, and the socket neither gets the frame nor closes', async ({ headers, errorType }) => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = await join(roomId, owner.token);
    const socketId = await socket.socketId();

    // Act
    const posted = await management(socketId, { method: 'POST', headers, body: forged });
    const deleted = await management(socketId, { method: 'DELETE', headers });

    // Assess
    expect(posted.status).toBe(403);
    expect(posted.headers.get('x-amzn-errortype')).toBe(errorType);
    expect(deleted.status).toBe(403);
    socket.send({ type: 'ping' });
    await socket.next((frame) => frame.type === 'pong');
    expect(socket.frames.filter((frame) => frame.type === 'message')).toEqual([]);
    expect(socket.isOpen).toBe(true);
  });
});
