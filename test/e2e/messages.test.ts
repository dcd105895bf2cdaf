import { beforeAll, describe, expect, it } from 'vitest';
import { derivedEventId } from '#shared/events';
import { api, createTestProject, ISO_TIMESTAMP, newGroupRoom, newUser, type TestProject, uniqueId } from '../support/api';

const isoTimestamp = expect.stringMatching(ISO_TIMESTAMP);

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('messages');
});

const user = (prefix?: string, roles?: string[]) => newUser(project, prefix, roles);

const groupRoom = (members?: string[]) => newGroupRoom(project, members);

const history = async (roomId: string) =>
  (await api(`/rooms/${roomId}/messages?limit=100`, { apiKey: project.apiKey })).body.messages as any[];

describe('POST /messages', () => {
  it('stores the message and returns it with an integer id', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const before = Date.now();

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'hello world' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body).toEqual({
      id: expect.any(Number),
      roomId,
      userId: owner.userId,
      content: 'hello world',
      parent_id: null,
      attachments: [],
      clientMessageId: null,
      createdAt: isoTimestamp,
      moderation: null,
      editedAt: null,
      editCount: 0,
      deletedAt: null,
      reactions: {},
      pinned: false,
    });
    expect(Number.isSafeInteger(posted.body.id)).toBe(true);
    expect(Date.parse(posted.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(posted.body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await history(roomId)).toEqual([posted.body]);
  });

  it('persists http and https attachments', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const attachments = ['https://cdn.example.com/a.png', 'http://example.org/b.pdf?x=1#frag'];

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'files', attachments } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body.attachments).toEqual(attachments);
    expect((await history(roomId))[0].attachments).toEqual(attachments);
  });

  it('accepts 10 attachments and refuses 11', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const urls = Array.from({ length: 11 }, (_, index) => `https://example.com/${index}`);

    // Act
    const ten = await api('/messages', { token: owner.token, body: { roomId, content: 'ten', attachments: urls.slice(0, 10) } });
    const eleven = await api('/messages', { token: owner.token, body: { roomId, content: 'eleven', attachments: urls } });

    // Assess
    expect(ten.status).toBe(201);
    expect(eleven).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.attachments' }] } } });
    expect((await history(roomId)).map((m) => m.content)).toEqual(['ten']);
  });

  describe.each([
    { variant: 'an ftp URL', bad: 'ftp://x' },
    { variant: 'a javascript: URL', bad: 'javascript:alert(1)' },
    { variant: 'a relative path', bad: '/uploads/a.png' },
    { variant: 'a data: URL', bad: 'data:text/html,<script>alert(1)</script>' },
    { variant: 'not a URL', bad: 'hello there' },
    { variant: 'a URL holding NUL', bad: 'https://cdn.example.com/a\u0000b' },
    { variant: 'a URL holding a lone surrogate', bad: 'https://cdn.example.com/a\ud800b' },
    { variant: 'a URL holding a line break', bad: 'https://cdn.example.com/a\nb' },
    { variant: 'a URL holding a right-to-left override', bad: 'https://cdn.example.com/\u202Egnp.exe' },
    { variant: 'a URL over 2048 characters', bad: `https://example.com/${'a'.repeat(2040)}` },
  ])('with $variant as the second attachment', ({ bad }) => {
    it('answers 400 naming body.attachments.1 and stores nothing', async () => {
      // Prepare
      const { owner, roomId } = await groupRoom();

      // Act
      const posted = await api('/messages', {
        token: owner.token,
        body: { roomId, content: 'x', attachments: ['https://example.com/ok.png', bad] },
      });

      // Assess
      expect(posted.status).toBe(400);
      expect(posted.body.error.code).toBe('validation_failed');
      expect(posted.body.error.details.map((d: any) => d.field)).toEqual(['body.attachments.1']);
      expect(await history(roomId)).toEqual([]);
    });
  });

  it('accepts content of 4000 characters and refuses 4001', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const atMax = await api('/messages', { token: owner.token, body: { roomId, content: 'a'.repeat(4000) } });
    const overMax = await api('/messages', { token: owner.token, body: { roomId, content: 'a'.repeat(4001) } });

    // Assess
    expect(atMax.status).toBe(201);
    expect(atMax.body.content).toHaveLength(4000);
    expect(overMax).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.content' }] } } });
  });

  it('stores unicode content intact, emoji (astral-plane characters) included', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const content = 'Grüße 👋🏽 — 你好 — <b>not html</b> "quoted" \\ back';

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body.content).toBe(content);
    expect((await history(roomId)).map((m) => m.content)).toEqual([content]);
  });

  it('gives sequential messages increasing ids', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const ids: number[] = [];
    for (let index = 0; index < 5; index++) {
      ids.push((await api('/messages', { token: owner.token, body: { roomId, content: `m${index}` } })).body.id);
    }

    // Assess
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(5);
    expect((await history(roomId)).map((m) => m.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Prepare
    const alice = await user('alice');

    // Act
    const posted = await api('/messages', { token: alice.token, body: { roomId: uniqueId('missing'), content: 'anyone?' } });

    // Assess
    expect(posted).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });

  it('needs a user JWT: the API key gets 401 missing_credentials', async () => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const posted = await api('/messages', { apiKey: project.apiKey, body: { roomId, content: 'server says', userId: 'bot' } });

    // Assess
    expect(posted).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await history(roomId)).toEqual([]);
  });

  it('lets both dm participants write, and nobody else', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const carol = await user('carol');
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Act
    const fromAlice = await api('/messages', { token: alice.token, body: { roomId: dm.body.id, content: 'hi bob' } });
    const fromBob = await api('/messages', { token: bob.token, body: { roomId: dm.body.id, content: 'hi alice' } });
    const fromCarol = await api('/messages', { token: carol.token, body: { roomId: dm.body.id, content: 'me too' } });

    // Assess
    expect(fromAlice.status).toBe(201);
    expect(fromBob.status).toBe(201);
    expect(fromCarol).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect((await history(dm.body.id)).map((m) => m.content)).toEqual(['hi bob', 'hi alice']);
  });

  it('lets a guest member post in a group room', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const guest = await user('guest', ['guest']);
    await api(`/rooms/${roomId}/members`, { token: owner.token, body: { userId: guest.userId, role: 'guest' } });

    // Act
    const posted = await api('/messages', { token: guest.token, body: { roomId, content: 'guest here' } });

    // Assess
    expect(posted).toMatchObject({ status: 201, body: { userId: guest.userId } });
  });
});

describe('replies (parent_id)', () => {
  it('stores the parent of a reply to a message of the same room', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const parent = await api('/messages', { token: owner.token, body: { roomId, content: 'question' } });

    // Act
    const reply = await api('/messages', { token: owner.token, body: { roomId, content: 'answer', parent_id: parent.body.id } });

    // Assess
    expect(reply.status).toBe(201);
    expect(reply.body.parent_id).toBe(parent.body.id);
    expect((await history(roomId)).map((m) => [m.content, m.parent_id])).toEqual([
      ['question', null],
      ['answer', parent.body.id],
    ]);
  });

  it('accepts parent_id null as no parent', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'top level', parent_id: null } });

    // Assess
    expect(posted).toMatchObject({ status: 201, body: { parent_id: null } });
  });

  it('answers 404 message_not_found for a parent in another room, and stores nothing', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const other = await api('/rooms', { token: owner.token, body: { id: uniqueId('other'), type: 'group' } });
    const elsewhere = await api('/messages', { token: owner.token, body: { roomId: other.body.id, content: 'elsewhere' } });

    // Act
    const reply = await api('/messages', { token: owner.token, body: { roomId, content: 'reply', parent_id: elsewhere.body.id } });

    // Assess
    expect(reply).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    expect(await history(roomId)).toEqual([]);
  });

  it('answers 404 message_not_found for an unknown parent id', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const existing = await api('/messages', { token: owner.token, body: { roomId, content: 'only one' } });

    // Act
    const reply = await api(`/rooms/${roomId}/messages`, {
      token: owner.token,
      body: { content: 'reply', parent_id: existing.body.id + 1 },
    });

    // Assess
    expect(reply).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    expect(await history(roomId)).toHaveLength(1);
  });
});

describe('clientMessageId', () => {
  it('makes a repeated send answer 200 with the original message and write nothing new', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const clientMessageId = uniqueId('cmid');
    const first = await api('/messages', { token: owner.token, body: { roomId, content: 'once', clientMessageId } });

    // Act
    const again = await api('/messages', { token: owner.token, body: { roomId, content: 'once (retry)', clientMessageId } });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body.clientMessageId).toBe(clientMessageId);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await history(roomId)).toEqual([first.body]);
  });

  it('is shared by POST /messages and POST /rooms/{roomId}/messages', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const clientMessageId = uniqueId('cmid');
    const first = await api('/messages', { token: owner.token, body: { roomId, content: 'once', clientMessageId } });

    // Act
    const again = await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'once', clientMessageId } });

    // Assess
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(await history(roomId)).toHaveLength(1);
  });

  it('is scoped to its room: the same id in another room is a new message', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const other = await api('/rooms', { token: owner.token, body: { id: uniqueId('other'), type: 'group' } });
    const clientMessageId = uniqueId('cmid');
    const first = await api('/messages', { token: owner.token, body: { roomId, content: 'a', clientMessageId } });

    // Act
    const second = await api('/messages', { token: owner.token, body: { roomId: other.body.id, content: 'b', clientMessageId } });

    // Assess
    expect(second.status).toBe(201);
    expect(second.body.roomId).toBe(other.body.id);
    expect(second.body.id).not.toBe(first.body.id);
  });

  it('creates one message for concurrent sends of the same id', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();
    const clientMessageId = uniqueId('cmid');

    // Act
    const results = await Promise.all(
      Array.from({ length: 5 }, () => api('/messages', { token: owner.token, body: { roomId, content: 'race', clientMessageId } })),
    );

    // Assess
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await history(roomId)).toHaveLength(1);
  });

  describe('under the key an agent gives its answer to a mention (agent:<handle>:<eventId>, computable by any member)', () => {
    /** A member mentions an agent; the key of the agent's answer follows from the stored message alone. */
    async function mentionedAgent() {
      const { owner, roomId } = await groupRoom();
      const mention = await api('/messages', { token: owner.token, body: { roomId, content: '@agent:support are you there?' } });
      const eventId = derivedEventId(project.projectId, roomId, mention.body.id, 'message.created');
      return { owner, roomId, answerKey: `agent:support:${eventId}` };
    }

    it.each([
      {
        route: 'POST /messages',
        send: (token: string, roomId: string, clientMessageId: string) =>
          api('/messages', { token, body: { roomId, content: 'claimed', clientMessageId } }),
      },
      {
        route: 'POST /rooms/{roomId}/messages',
        send: (token: string, roomId: string, clientMessageId: string) =>
          api(`/rooms/${roomId}/messages`, { token, body: { content: 'claimed', clientMessageId } }),
      },
      {
        route: 'POST /admin/messages/import',
        send: (_token: string, roomId: string, clientMessageId: string) =>
          api('/admin/messages/import', {
            apiKey: project.apiKey,
            body: { roomId, userId: 'legacy', content: 'claimed', clientMessageId },
          }),
      },
    ])('is refused on $route with 400 reserved_id, storing nothing', async ({ send }) => {
      // Prepare
      const { owner, roomId, answerKey } = await mentionedAgent();

      // Act
      const claimed = await send(owner.token, roomId, answerKey);

      // Assess
      expect(claimed).toMatchObject({
        status: 400,
        body: { error: { code: 'reserved_id', details: [{ field: 'body.clientMessageId' }] } },
      });
      expect((await history(roomId)).map((message) => message.content)).toEqual(['@agent:support are you there?']);
    });

    it('makes an import batch with it in one row write none of its rows', async () => {
      // Prepare
      const { roomId, answerKey } = await mentionedAgent();

      // Act
      const imported = await api('/admin/messages/import/batch', {
        apiKey: project.apiKey,
        body: {
          messages: [
            { roomId, userId: 'legacy', content: 'fine', clientMessageId: uniqueId('cmid') },
            { roomId, userId: 'legacy', content: 'claimed', clientMessageId: answerKey },
          ],
        },
      });

      // Assess
      expect(imported).toMatchObject({
        status: 400,
        body: { error: { code: 'reserved_id', details: [{ field: 'body.messages.1.clientMessageId' }] } },
      });
      expect(await history(roomId)).toHaveLength(1);
    });
  });

  it('accepts 128 characters and refuses 129', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const atMax = await api('/messages', { token: owner.token, body: { roomId, content: 'x', clientMessageId: 'c'.repeat(128) } });
    const overMax = await api('/messages', { token: owner.token, body: { roomId, content: 'y', clientMessageId: 'c'.repeat(129) } });

    // Assess
    expect(atMax.status).toBe(201);
    expect(overMax).toMatchObject({
      status: 400,
      body: { error: { code: 'validation_failed', details: [{ field: 'body.clientMessageId' }] } },
    });
  });
});

describe('POST /rooms/{roomId}/messages', () => {
  it('stores a message for the room in the path', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const posted = await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'by path' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({ roomId, userId: owner.userId, content: 'by path' });
    expect(await history(roomId)).toEqual([posted.body]);
  });

  it('refuses roomId in the body (the room is the path)', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const posted = await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { roomId, content: 'twice' } });

    // Assess
    expect(posted).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
  });

  it('lets the API key post as a named user', async () => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const posted = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { content: 'from the backend', userId: 'bot' } });

    // Assess
    expect(posted).toMatchObject({ status: 201, body: { userId: 'bot', content: 'from the backend' } });
  });

  it('answers 400 naming body.userId when the API key posts without a userId', async () => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const posted = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { content: 'who am I?' } });

    // Assess
    expect(posted).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.userId' }] } } });
    expect(await history(roomId)).toEqual([]);
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Act
    const posted = await api(`/rooms/${uniqueId('missing')}/messages`, { apiKey: project.apiKey, body: { content: 'x', userId: 'bot' } });

    // Assess
    expect(posted).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describe('backdating (userId and createdAt)', () => {
  describe.each([
    { variant: 'userId of someone else', extra: { userId: 'somebody-else' } },
    { variant: 'createdAt', extra: { createdAt: '2024-01-01T00:00:00.000Z' } },
    { variant: 'createdAt of now', extra: { createdAt: new Date().toISOString() } },
  ])('a member setting $variant', ({ extra }) => {
    it.each([
      {
        route: 'POST /messages',
        send: (roomId: string, token: string, body: object) => api('/messages', { token, body: { roomId, ...body } }),
      },
      {
        route: 'POST /rooms/{roomId}/messages',
        send: (roomId: string, token: string, body: object) => api(`/rooms/${roomId}/messages`, { token, body }),
      },
    ])('gets 403 backdating_forbidden on $route', async ({ send }) => {
      // Prepare
      const { owner, roomId } = await groupRoom();

      // Act
      const posted = await send(roomId, owner.token, { content: 'sneaky', ...extra });

      // Assess
      expect(posted).toMatchObject({ status: 403, body: { error: { code: 'backdating_forbidden' } } });
      expect(await history(roomId)).toEqual([]);
    });
  });

  it('lets a member name themselves as userId', async () => {
    // Prepare
    const { owner, roomId } = await groupRoom();

    // Act
    const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'me', userId: owner.userId } });

    // Assess
    expect(posted).toMatchObject({ status: 201, body: { userId: owner.userId } });
  });

  describe.each([
    { variant: 'an admin JWT', credentials: async () => ({ token: (await user('admin', ['admin'])).token }) },
    { variant: 'an owner JWT', credentials: async () => ({ token: (await user('powner', ['owner'])).token }) },
    { variant: 'the API key', credentials: async () => ({ apiKey: project.apiKey }) },
  ])('with $variant', ({ credentials }) => {
    it('stores the given author and time, normalized to UTC, in its place in history', async () => {
      // Prepare
      const { owner, roomId } = await groupRoom();
      const live = await api('/messages', { token: owner.token, body: { roomId, content: 'live' } });
      const auth = await credentials();

      // Act
      const posted = await api(`/rooms/${roomId}/messages`, {
        ...auth,
        body: { content: 'from the archive', userId: 'archivist', createdAt: '2021-06-01T12:00:00+02:00' },
      });

      // Assess
      expect(posted.status).toBe(201);
      expect(posted.body).toMatchObject({ userId: 'archivist', createdAt: '2021-06-01T10:00:00.000Z' });
      expect(posted.body.id).toBeLessThan(live.body.id);
      expect((await history(roomId)).map((m) => m.content)).toEqual(['from the archive', 'live']);
    });
  });

  describe.each([
    { variant: 'before 2000-01-01', createdAt: '1999-12-31T23:59:59.000Z' },
    { variant: 'in the future', createdAt: new Date(Date.now() + 24 * 3600_000).toISOString() },
    { variant: 'not a timestamp', createdAt: 'yesterday' },
    { variant: 'a date without time', createdAt: '2024-01-01' },
  ])('with createdAt $variant', ({ createdAt }) => {
    it('answers 400 naming body.createdAt, even for the API key', async () => {
      // Prepare
      const { roomId } = await groupRoom();

      // Act
      const posted = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { content: 'x', userId: 'bot', createdAt } });

      // Assess
      expect(posted).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
      expect(new Set(posted.body.error.details.map((d: any) => d.field))).toEqual(new Set(['body.createdAt']));
    });
  });
});

describe('a refused message to a public room', () => {
  it.each([
    { variant: 'an unknown parent_id', body: { content: 'hi', parent_id: 999_999 }, status: 404, code: 'message_not_found' },
    { variant: 'an empty content', body: { content: '' }, status: 400, code: 'validation_failed' },
  ])('($variant) leaves its sender outside the room', async ({ body, status, code }) => {
    // Prepare
    const owner = await newUser(project, 'owner');
    const passerBy = await newUser(project, 'passer-by');
    const roomId = uniqueId('lobby');
    await api('/rooms', { token: owner.token, body: { id: roomId, type: 'public' } });

    // Act
    const refused = await api(`/rooms/${roomId}/messages`, { token: passerBy.token, body });

    // Assess
    expect(refused).toMatchObject({ status, body: { error: { code } } });
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members.map((member: { userId: string }) => member.userId)).toEqual([owner.userId]);
  });

  it('is joined by the author of the first accepted message', async () => {
    // Prepare
    const owner = await newUser(project, 'owner');
    const passerBy = await newUser(project, 'passer-by');
    const roomId = uniqueId('lobby');
    await api('/rooms', { token: owner.token, body: { id: roomId, type: 'public' } });

    // Act
    const sent = await api(`/rooms/${roomId}/messages`, { token: passerBy.token, body: { content: 'hello' } });

    // Assess
    expect(sent.status).toBe(201);
    const members = await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey });
    expect(members.body.members.map((member: { userId: string }) => member.userId).sort()).toEqual([owner.userId, passerBy.userId].sort());
  });
});
