import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('history');
});

/** A room with `count` messages m0..m{count-1}, sent in order, and its owner's token. */
async function roomWithMessages(count: number) {
  const ownerId = uniqueId('owner');
  const token = await project.token(ownerId);
  const roomId = uniqueId('room');
  await api('/rooms', { token, body: { id: roomId, type: 'group' } });
  const messages: any[] = [];
  for (let index = 0; index < count; index++) {
    messages.push((await api('/messages', { token, body: { roomId, content: `m${index}` } })).body);
  }
  return { roomId, token, messages };
}

const contents = (page: { messages: any[] }) => page.messages.map((m) => m.content);

describe('GET /rooms/{roomId}/messages', () => {
  it('returns the newest page, oldest first, with hasMore false when everything fits', async () => {
    // Prepare
    const { roomId, token, messages } = await roomWithMessages(3);

    // Act
    const page = await api(`/rooms/${roomId}/messages`, { token });

    // Assess
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ messages, hasMore: false });
  });

  it('returns an empty page for a room without messages', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(0);

    // Act
    const page = await api(`/rooms/${roomId}/messages`, { token });

    // Assess
    expect(page.body).toEqual({ messages: [], hasMore: false });
  });

  it('limits the page to the newest `limit` messages and says there are more', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(5);

    // Act
    const page = await api(`/rooms/${roomId}/messages?limit=2`, { token });

    // Assess
    expect(page.status).toBe(200);
    expect(contents(page.body)).toEqual(['m3', 'm4']);
    expect(page.body.hasMore).toBe(true);
  });

  it('pages back with before=<oldest id> through the whole history without gaps or repeats', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(7);

    // Act
    const pages: string[][] = [];
    let before: number | undefined;
    let hasMore = true;
    while (hasMore && pages.length < 10) {
      const page = await api(`/rooms/${roomId}/messages?limit=3${before === undefined ? '' : `&before=${before}`}`, { token });
      expect(page.status).toBe(200);
      pages.push(contents(page.body));
      before = page.body.messages[0]?.id;
      hasMore = page.body.hasMore;
    }

    // Assess
    expect(pages).toEqual([['m4', 'm5', 'm6'], ['m1', 'm2', 'm3'], ['m0']]);
  });

  it('polls forward with after=<id>: newer messages, ascending', async () => {
    // Prepare
    const { roomId, token, messages } = await roomWithMessages(5);

    // Act
    const newer = await api(`/rooms/${roomId}/messages?after=${messages[1].id}`, { token });
    const newest = await api(`/rooms/${roomId}/messages?after=${messages[4].id}`, { token });

    // Assess
    expect(newer.body).toEqual({ messages: messages.slice(2), hasMore: false });
    expect(newest.body).toEqual({ messages: [], hasMore: false });
  });

  it('pages forward with after and limit, the oldest newer messages first', async () => {
    // Prepare
    const { roomId, token, messages } = await roomWithMessages(6);

    // Act
    const first = await api(`/rooms/${roomId}/messages?after=${messages[0].id}&limit=2`, { token });
    const second = await api(`/rooms/${roomId}/messages?after=${first.body.messages[1].id}&limit=2`, { token });
    const last = await api(`/rooms/${roomId}/messages?after=${second.body.messages[1].id}&limit=2`, { token });

    // Assess
    expect([contents(first.body), first.body.hasMore]).toEqual([['m1', 'm2'], true]);
    expect([contents(second.body), second.body.hasMore]).toEqual([['m3', 'm4'], true]);
    expect([contents(last.body), last.body.hasMore]).toEqual([['m5'], false]);
  });

  it.each(['after=0&before=0', 'before=3&after=1'])('refuses before and after together (%s) with 400 saying to send one', async (query) => {
    // Prepare
    const { roomId, token } = await roomWithMessages(2);

    // Act
    const refused = await api(`/rooms/${roomId}/messages?${query}`, { token });

    // Assess
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'validation_failed',
          details: [
            {
              field: 'query',
              message: 'takes `before` or `after`, not both: `before` pages back from a message, `after` polls forward from one',
            },
          ],
        },
      },
    });
  });

  it('returns everything for after=0', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(2);

    // Act
    const all = await api(`/rooms/${roomId}/messages?after=0`, { token });

    // Assess
    expect(contents(all.body)).toEqual(['m0', 'm1']);
  });

  it('defaults to 50 messages per page and accepts limit=100', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(0);
    const rows = Array.from({ length: 60 }, (_, index) => ({
      roomId,
      userId: 'importer',
      content: `i${index}`,
      createdAt: new Date(Date.UTC(2022, 0, 1, 0, 0, index)).toISOString(),
    }));
    expect((await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } })).status).toBe(200);

    // Act
    const byDefault = await api(`/rooms/${roomId}/messages`, { token });
    const atMax = await api(`/rooms/${roomId}/messages?limit=100`, { token });

    // Assess
    expect(byDefault.body.messages).toHaveLength(50);
    expect(byDefault.body.messages[0].content).toBe('i10');
    expect(byDefault.body.hasMore).toBe(true);
    expect(atMax.body.messages).toHaveLength(60);
    expect(atMax.body.hasMore).toBe(false);
  });

  it('orders by createdAt, so a backdated import lands in its place between live messages', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(0);
    const first = await api('/messages', { token, body: { roomId, content: 'first' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const third = await api('/messages', { token, body: { roomId, content: 'third' } });
    const between = new Date((Date.parse(first.body.createdAt) + Date.parse(third.body.createdAt)) / 2).toISOString();

    // Act
    const imported = await api('/admin/messages/import', {
      apiKey: project.apiKey,
      body: { roomId, userId: 'archivist', content: 'second', createdAt: between },
    });
    const page = await api(`/rooms/${roomId}/messages`, { token });

    // Assess
    expect(imported.status).toBe(201);
    expect(contents(page.body)).toEqual(['first', 'second', 'third']);
    const times = page.body.messages.map((m: any) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const ids = page.body.messages.map((m: any) => m.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('keeps imports with the same createdAt in id order', async () => {
    // Prepare
    const { roomId, token } = await roomWithMessages(0);
    const createdAt = '2023-03-03T03:03:03.000Z';
    const rows = ['x', 'y', 'z'].map((content) => ({ roomId, userId: 'importer', content, createdAt }));
    await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Act
    const page = await api(`/rooms/${roomId}/messages`, { token });

    // Assess
    expect(page.body.messages).toHaveLength(3);
    expect(page.body.messages.every((m: any) => m.createdAt === createdAt)).toBe(true);
    const ids = page.body.messages.map((m: any) => m.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(3);
  });

  it('is readable with the API key', async () => {
    // Prepare
    const { roomId, messages } = await roomWithMessages(2);

    // Act
    const page = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey });

    // Assess
    expect(page.body).toEqual({ messages, hasMore: false });
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Act
    const page = await api(`/rooms/${uniqueId('missing')}/messages`, { apiKey: project.apiKey });

    // Assess
    expect(page).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });

  describe.each([
    { query: 'limit=0', field: 'query.limit' },
    { query: 'limit=101', field: 'query.limit' },
    { query: 'limit=ten', field: 'query.limit' },
    { query: 'limit=2.5', field: 'query.limit' },
    { query: 'before=-1', field: 'query.before' },
    { query: 'before=abc', field: 'query.before' },
    { query: 'after=1.5', field: 'query.after' },
    { query: 'after=-5', field: 'query.after' },
    { query: 'after=99999999999999999999', field: 'query.after' },
  ])('with $query', ({ query, field }) => {
    it(`answers 400 naming ${field}`, async () => {
      // Prepare
      const { roomId, token } = await roomWithMessages(0);

      // Act
      const page = await api(`/rooms/${roomId}/messages?${query}`, { token });

      // Assess
      expect(page).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
      expect(page.body.error.details).toContainEqual(expect.objectContaining({ field }));
    });
  });
});
