import { afterEach, describe, expect, it } from 'vitest';
import { api, uniqueId } from '../support/api';
import { realtimeSuite } from '../support/realtime-suite';
import { dataOf, openSse, type SseStream } from '../support/sse';
import { connectWelcomed } from '../support/ws';

/**
 * The three ways to receive a room carry the same messages with the same ids: a WebSocket, an SSE
 * stream (`GET /rooms/{roomId}/stream`, token in `Authorization` or `?token=`, resumable with
 * `Last-Event-ID`) and polling (`GET /rooms/{roomId}/messages?after=`).
 */

const { project, track, user, room } = realtimeSuite('realtime-transports');

const streams: SseStream[] = [];
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close();
});

async function stream(path: string, options: Parameters<typeof openSse>[1] = {}) {
  const opened = await openSse(path, options);
  streams.push(opened);
  return opened;
}

const post = async (roomId: string, token: string, content: string) => {
  const posted = await api('/messages', { token, body: { roomId, content } });
  expect(posted.status).toBe(201);
  return posted.body;
};
const messageEvents = (sse: SseStream) => sse.events.filter((event) => event.event === 'message');

describe('a message sent over REST', () => {
  it('arrives over the WebSocket, over SSE (token by header and by query) and through polling, identical everywhere', async () => {
    // Prepare
    const bob = await user('bob');
    const { owner, roomId } = await room('group', [bob.userId]);
    const before = await post(roomId, owner.token, 'before anyone listens');
    const socket = track(await connectWelcomed(roomId, bob.token, { history: 0 }));
    const byHeader = await stream(`/rooms/${roomId}/stream`, { token: bob.token });
    const byQuery = await stream(`/rooms/${roomId}/stream?token=${encodeURIComponent(bob.token)}`);
    await Promise.all([byHeader.started(), byQuery.started()]);

    // Act
    const message = await post(roomId, owner.token, 'one message, three transports');
    const overWs = await socket.next((frame) => frame.type === 'message');
    const overSse = await Promise.all([byHeader, byQuery].map((sse) => sse.next((event) => event.event === 'message')));
    const polled = await api(`/rooms/${roomId}/messages?after=${before.id}`, { token: bob.token });

    // Assess
    expect(overWs).toEqual({ type: 'message', message });
    for (const [index, sse] of [byHeader, byQuery].entries()) {
      expect(sse.status).toBe(200);
      expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(sse.retry()).toBe(1000);
      expect(overSse[index]).toEqual({ id: String(message.id), event: 'message', data: JSON.stringify(message) });
      expect(messageEvents(sse)).toHaveLength(1);
    }
    expect(polled.body).toEqual({ messages: [message], hasMore: false });
  });

  it('sent over the WebSocket reaches SSE too, in order with REST messages', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const socket = track(await connectWelcomed(roomId, owner.token, { history: 0 }));
    const sse = await stream(`/rooms/${roomId}/stream`, { token: owner.token });
    await sse.started();

    // Act
    socket.send({ type: 'message', content: 'over ws' });
    const ack = await socket.next((frame) => frame.type === 'ack');
    const rest = await post(roomId, owner.token, 'over rest');
    await sse.next(() => messageEvents(sse).length >= 2);

    // Assess
    expect(messageEvents(sse).map(dataOf)).toEqual([ack.message, rest]);
  });
});

describe('the SSE stream', () => {
  it('starts with the messages newer than the connect, without Last-Event-ID', async () => {
    // Prepare
    const { owner, roomId } = await room();
    await post(roomId, owner.token, 'old news');
    const sse = await stream(`/rooms/${roomId}/stream`, { token: owner.token });
    await sse.started();

    // Act
    const fresh = await post(roomId, owner.token, 'fresh');
    await sse.next((event) => event.event === 'message');

    // Assess
    expect(messageEvents(sse).map(dataOf)).toEqual([fresh]);
  });

  it.each([
    {
      variant: 'the Last-Event-ID header',
      open: (path: string, token: string, id: number) => stream(path, { token, headers: { 'last-event-id': String(id) } }),
    },
    { variant: 'the lastEventId query', open: (path: string, token: string, id: number) => stream(`${path}?lastEventId=${id}`, { token }) },
  ])('resumes after the id given in $variant: the messages after it come first, then new ones', async ({ open }) => {
    // Prepare
    const { owner, roomId } = await room();
    const [first, second, third] = [
      await post(roomId, owner.token, 'first'),
      await post(roomId, owner.token, 'second'),
      await post(roomId, owner.token, 'third'),
    ];

    // Act
    const sse = await open(`/rooms/${roomId}/stream`, owner.token, first.id);
    await sse.next(() => messageEvents(sse).length >= 2);
    const fourth = await post(roomId, owner.token, 'fourth');
    await sse.next(() => messageEvents(sse).length >= 3);

    // Assess
    expect(messageEvents(sse).map((event) => event.id)).toEqual([second.id, third.id, fourth.id].map(String));
    expect(messageEvents(sse).map(dataOf)).toEqual([second, third, fourth]);
  });

  it('joins a project member to a public room, as the WebSocket does', async () => {
    // Prepare
    const { roomId } = await room('public');
    const visitor = await user('visitor');

    // Act
    const sse = await stream(`/rooms/${roomId}/stream`, { token: visitor.token });
    await sse.started();

    // Assess
    expect(sse.status).toBe(200);
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members).toContainEqual(expect.objectContaining({ userId: visitor.userId }));
  });

  describe.each([
    { variant: 'no token', auth: async () => ({}), status: 401, code: 'missing_credentials' },
    { variant: 'a bad token', auth: async () => ({ token: 'not.a.jwt' }), status: 401, code: 'invalid_token' },
    {
      variant: 'only the API key',
      auth: async () => ({ headers: { 'x-service-api-key': project.apiKey } }),
      status: 401,
      code: 'missing_credentials',
    },
    { variant: 'a non-member token', auth: async () => ({ token: (await user('outsider')).token }), status: 403, code: 'not_a_member' },
  ])('with $variant', ({ auth, status, code }) => {
    it(`is refused with ${status} ${code} as JSON`, async () => {
      // Prepare
      const { roomId } = await room();

      // Act
      const sse = await stream(`/rooms/${roomId}/stream`, await auth());

      // Assess
      expect({ status: sse.status, contentType: sse.headers.get('content-type'), code: sse.body?.error?.code }).toEqual({
        status,
        contentType: 'application/json',
        code,
      });
    });
  });

  it.each([
    {
      variant: 'an unknown room',
      path: () => `/rooms/${uniqueId('missing')}/stream`,
      headers: {} as Record<string, string>,
      status: 404,
      code: 'room_not_found',
    },
    {
      variant: 'a Last-Event-ID that is not a message id',
      path: (roomId: string) => `/rooms/${roomId}/stream`,
      headers: { 'last-event-id': 'abc' },
      status: 400,
      code: 'validation_failed',
    },
  ])('answers $status $code to $variant', async ({ path, headers, status, code }) => {
    // Prepare
    const { owner, roomId } = await room();

    // Act
    const sse = await stream(path(roomId), { token: owner.token, headers });

    // Assess
    expect({ status: sse.status, code: sse.body?.error?.code }).toEqual({ status, code });
  });
});

describe('polling', () => {
  it('with after= returns only the newer messages, oldest first, with the ids the other transports use', async () => {
    // Prepare
    const { owner, roomId } = await room();
    const first = await post(roomId, owner.token, 'a');
    const second = await post(roomId, owner.token, 'b');
    const third = await post(roomId, owner.token, 'c');

    // Act
    const afterFirst = await api(`/rooms/${roomId}/messages?after=${first.id}`, { token: owner.token });
    const afterThird = await api(`/rooms/${roomId}/messages?after=${third.id}`, { token: owner.token });

    // Assess
    expect(afterFirst.body).toEqual({ messages: [second, third], hasMore: false });
    expect(afterThird.body).toEqual({ messages: [], hasMore: false });
  });
});
