import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';

let project: TestProject;
let adminToken: string;
beforeAll(async () => {
  project = await createTestProject('imports');
  adminToken = await project.token(uniqueId('admin'), ['admin']);
});

/** A group room owned by a fresh member, who is the only member. */
async function groupRoom() {
  const ownerId = uniqueId('owner');
  const token = await project.token(ownerId);
  const roomId = uniqueId('room');
  await api('/rooms', { token, body: { id: roomId, type: 'group' } });
  return { roomId, ownerId, token };
}

const history = async (roomId: string) =>
  (await api(`/rooms/${roomId}/messages?limit=100`, { apiKey: project.apiKey })).body.messages as any[];
const memberIds = async (roomId: string) =>
  ((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body.members as any[]).map((m) => m.userId);

describe('POST /admin/messages/import', () => {
  describe.each([
    { variant: 'the API key', auth: () => ({ apiKey: project.apiKey }) },
    { variant: 'an admin JWT (not a member of the room)', auth: () => ({ token: adminToken }) },
  ])('with $variant', ({ auth }) => {
    it('stores the message with the given author, time and clientMessageId (201), without joining anyone', async () => {
      // Prepare
      const { roomId, ownerId } = await groupRoom();
      const clientMessageId = uniqueId('legacy');

      // Act
      const imported = await api('/admin/messages/import', {
        ...auth(),
        body: { roomId, userId: 'legacy-user', content: 'from the old system', createdAt: '2020-02-02T02:02:02.000Z', clientMessageId },
      });

      // Assess
      expect(imported.status).toBe(201);
      expect(imported.body).toEqual({
        id: expect.any(Number),
        roomId,
        userId: 'legacy-user',
        content: 'from the old system',
        parent_id: null,
        attachments: [],
        clientMessageId,
        createdAt: '2020-02-02T02:02:02.000Z',
        moderation: null,
        editedAt: null,
        editCount: 0,
        deletedAt: null,
        reactions: {},
        pinned: false,
      });
      expect(await history(roomId)).toEqual([imported.body]);
      expect(await memberIds(roomId)).toEqual([ownerId]);
    });
  });

  it('stamps the current time when createdAt is omitted', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const before = Date.now();

    // Act
    const imported = await api('/admin/messages/import', { apiKey: project.apiKey, body: { roomId, userId: 'u1', content: 'now' } });

    // Assess
    expect(imported.status).toBe(201);
    expect(Date.parse(imported.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(imported.body.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('is idempotent on clientMessageId: a repeat answers 200 with the original and writes nothing', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const row = { roomId, userId: 'u1', content: 'once', createdAt: '2021-01-01T00:00:00.000Z', clientMessageId: uniqueId('c') };
    const first = await api('/admin/messages/import', { apiKey: project.apiKey, body: row });

    // Act
    const again = await api('/admin/messages/import', { apiKey: project.apiKey, body: { ...row, content: 'changed on retry' } });

    // Assess
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await history(roomId)).toEqual([first.body]);
  });

  it('keeps attachments and parent_id of a reply', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const parent = await api('/admin/messages/import', { apiKey: project.apiKey, body: { roomId, userId: 'u1', content: 'q' } });

    // Act
    const reply = await api('/admin/messages/import', {
      apiKey: project.apiKey,
      body: { roomId, userId: 'u2', content: 'a', parent_id: parent.body.id, attachments: ['https://example.com/a.png'] },
    });

    // Assess
    expect(reply).toMatchObject({ status: 201, body: { parent_id: parent.body.id, attachments: ['https://example.com/a.png'] } });
  });

  it('answers 400 naming body.userId when the author is missing', async () => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const imported = await api('/admin/messages/import', { apiKey: project.apiKey, body: { roomId, content: 'who?' } });

    // Assess
    expect(imported).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(imported.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.userId' }));
    expect(await history(roomId)).toEqual([]);
  });

  it('answers 404 room_not_found for an unknown room', async () => {
    // Act
    const imported = await api('/admin/messages/import', {
      apiKey: project.apiKey,
      body: { roomId: uniqueId('missing'), userId: 'u1', content: 'x' },
    });

    // Assess
    expect(imported).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });

  it('answers 403 forbidden to a member, even one who owns the room', async () => {
    // Prepare
    const { roomId, token, ownerId } = await groupRoom();

    // Act
    const imported = await api('/admin/messages/import', { token, body: { roomId, userId: ownerId, content: 'x' } });

    // Assess
    expect(imported).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(await history(roomId)).toEqual([]);
  });
});

describe('POST /admin/messages/import/batch', () => {
  it('imports rows into several rooms and reports each row in order (200)', async () => {
    // Prepare
    const roomA = await groupRoom();
    const roomB = await groupRoom();
    const rows = [
      { roomId: roomA.roomId, userId: 'u1', content: 'a1', createdAt: '2020-01-01T00:00:01.000Z' },
      { roomId: roomB.roomId, userId: 'u2', content: 'b1', createdAt: '2020-01-01T00:00:02.000Z' },
      { roomId: roomA.roomId, userId: 'u3', content: 'a2', createdAt: '2020-01-01T00:00:03.000Z', clientMessageId: uniqueId('c') },
    ];

    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Assess
    expect(imported.status).toBe(200);
    expect(imported.body.imported).toBe(3);
    expect(imported.body.duplicates).toBe(0);
    expect(imported.body.results.map((r: any) => [r.index, r.created, r.message.content, r.message.roomId])).toEqual([
      [0, true, 'a1', roomA.roomId],
      [1, true, 'b1', roomB.roomId],
      [2, true, 'a2', roomA.roomId],
    ]);
    expect(await history(roomA.roomId)).toEqual([imported.body.results[0].message, imported.body.results[2].message]);
    expect(await history(roomB.roomId)).toEqual([imported.body.results[1].message]);
  });

  it('counts rows whose clientMessageId was imported before as duplicates and writes nothing for them', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const rows = ['r1', 'r2'].map((content) => ({ roomId, userId: 'u1', content, clientMessageId: uniqueId(content) }));
    const first = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Act
    const again = await api('/admin/messages/import/batch', {
      apiKey: project.apiKey,
      body: { messages: [...rows, { roomId, userId: 'u1', content: 'r3', clientMessageId: uniqueId('r3') }] },
    });

    // Assess
    expect(again.status).toBe(200);
    expect([again.body.imported, again.body.duplicates]).toEqual([1, 2]);
    expect(again.body.results.map((r: any) => r.created)).toEqual([false, false, true]);
    expect(again.body.results[0].message).toEqual(first.body.results[0].message);
    expect((await history(roomId)).map((m) => m.content)).toEqual(['r1', 'r2', 'r3']);
  });

  it('treats a clientMessageId repeated inside one batch as a duplicate', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const clientMessageId = uniqueId('same');

    // Act
    const imported = await api('/admin/messages/import/batch', {
      apiKey: project.apiKey,
      body: {
        messages: [
          { roomId, userId: 'u1', content: 'first', clientMessageId },
          { roomId, userId: 'u1', content: 'second', clientMessageId },
        ],
      },
    });

    // Assess
    expect([imported.body.imported, imported.body.duplicates]).toEqual([1, 1]);
    expect((await history(roomId)).map((m) => m.content)).toEqual(['first']);
  });

  it('accepts 100 rows of maximal content', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const rows = Array.from({ length: 100 }, (_, index) => ({
      roomId,
      userId: 'bulk',
      content: `${String(index).padStart(3, '0')}${'x'.repeat(3997)}`,
      createdAt: new Date(Date.UTC(2019, 0, 1, 0, 0, 0, index)).toISOString(),
    }));

    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Assess
    expect(imported.status).toBe(200);
    expect(imported.body.imported).toBe(100);
    const stored = await history(roomId);
    expect(stored).toHaveLength(100);
    expect(stored.map((m) => m.content.slice(0, 3))).toEqual(rows.map((row) => row.content.slice(0, 3)));
  });

  it('refuses 101 rows with 400 and writes nothing', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const rows = Array.from({ length: 101 }, (_, index) => ({ roomId, userId: 'bulk', content: `row ${index}` }));

    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Assess
    expect(imported).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(imported.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.messages' }));
    expect(await history(roomId)).toEqual([]);
  });

  it('answers 404 room_not_found when any row names an unknown room, and writes nothing', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const rows = [
      { roomId, userId: 'u1', content: 'valid 1' },
      { roomId, userId: 'u1', content: 'valid 2' },
      { roomId: uniqueId('missing'), userId: 'u1', content: 'lost' },
    ];

    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Assess
    expect(imported).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    expect(await history(roomId)).toEqual([]);
  });

  it('answers 400 naming the bad row and field, and writes nothing', async () => {
    // Prepare
    const { roomId } = await groupRoom();
    const rows = [
      { roomId, userId: 'u1', content: 'fine' },
      { roomId, userId: 'u1', content: 'fine too' },
      { roomId, userId: 'u1', content: '' },
    ];

    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: rows } });

    // Assess
    expect(imported).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(imported.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.messages.2.content' }));
    expect(await history(roomId)).toEqual([]);
  });

  it('refuses an empty batch', async () => {
    // Act
    const imported = await api('/admin/messages/import/batch', { apiKey: project.apiKey, body: { messages: [] } });

    // Assess
    expect(imported).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
  });

  it('works with an admin JWT too', async () => {
    // Prepare
    const { roomId } = await groupRoom();

    // Act
    const imported = await api('/admin/messages/import/batch', {
      token: adminToken,
      body: { messages: [{ roomId, userId: 'u1', content: 'by admin' }] },
    });

    // Assess
    expect(imported).toMatchObject({ status: 200, body: { imported: 1, duplicates: 0 } });
  });
});
