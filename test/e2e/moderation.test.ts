import { describe, expect, it } from 'vitest';
import { api, createTestProject, uniqueId } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';

/** A fresh project (block lists are per project) with an owner-made group room and a moderator token. */
async function setup() {
  const project = await createTestProject('moderation');
  const authorId = uniqueId('author');
  const author = await project.token(authorId);
  const moderator = await project.token(uniqueId('mod'), ['moderator']);
  const roomId = uniqueId('room');
  await api('/rooms', { token: author, body: { id: roomId, type: 'group' } });
  return { project, author, authorId, moderator, roomId };
}

describe('GET and PUT /admin/moderation/blocklist', () => {
  it('starts empty', async () => {
    // Prepare
    const { moderator } = await setup();

    // Act
    const list = await api('/admin/moderation/blocklist', { token: moderator });

    // Assess
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ terms: [], updatedAt: null });
  });

  it('replaces the list with trimmed, lower-cased, de-duplicated terms', async () => {
    // Prepare
    const { project, moderator } = await setup();

    // Act
    const replaced = await api('/admin/moderation/blocklist', {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { terms: ['  Spam  ', 'spam', 'BUY NOW', 'scam'] },
    });
    const list = await api('/admin/moderation/blocklist', { token: moderator });

    // Assess
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ terms: ['spam', 'buy now', 'scam'], updatedAt: expect.any(String) });
    expect(list.body).toEqual(replaced.body);
  });

  it('replaces rather than merges, and an empty list clears it', async () => {
    // Prepare
    const { project } = await setup();
    const admin = await project.token(uniqueId('admin'), ['admin']);
    await api('/admin/moderation/blocklist', { method: 'PUT', token: admin, body: { terms: ['one', 'two'] } });

    // Act
    const second = await api('/admin/moderation/blocklist', { method: 'PUT', token: admin, body: { terms: ['three'] } });
    const cleared = await api('/admin/moderation/blocklist', { method: 'PUT', token: admin, body: { terms: [] } });

    // Assess
    expect(second.body.terms).toEqual(['three']);
    expect(cleared.body.terms).toEqual([]);
    expect((await api('/admin/moderation/blocklist', { token: admin })).body.terms).toEqual([]);
  });

  it('answers 403 forbidden to a moderator replacing the list', async () => {
    // Prepare
    const { moderator, project } = await setup();

    // Act
    const replaced = await api('/admin/moderation/blocklist', { method: 'PUT', token: moderator, body: { terms: ['x'] } });

    // Assess
    expect(replaced).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await api('/admin/moderation/blocklist', { apiKey: project.apiKey })).body.terms).toEqual([]);
  });

  describe.each([
    { variant: 'terms missing', body: {}, field: 'body.terms' },
    { variant: 'terms not an array', body: { terms: 'spam' }, field: 'body.terms' },
    { variant: 'a term that is not a string', body: { terms: ['ok', 42] }, field: 'body.terms.1' },
    { variant: 'an empty term', body: { terms: [''] }, field: 'body.terms.0' },
    { variant: 'a blank term', body: { terms: ['ok', '   '] }, field: 'body.terms.1' },
    { variant: 'a term over 200 characters', body: { terms: ['t'.repeat(201)] }, field: 'body.terms.0' },
    { variant: 'over 1000 terms', body: { terms: Array.from({ length: 1001 }, (_, i) => `term${i}`) }, field: 'body.terms' },
    { variant: 'an unknown field', body: { terms: [], mode: 'merge' }, field: 'body' },
  ])('PUT with $variant', ({ body, field }) => {
    it(`answers 400 naming ${field} and keeps the list`, async () => {
      // Prepare
      const { project } = await setup();
      await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['keep'] } });

      // Act
      const replaced = await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body });

      // Assess
      expect(replaced).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
      expect(replaced.body.error.details).toContainEqual(expect.objectContaining({ field }));
      expect((await api('/admin/moderation/blocklist', { apiKey: project.apiKey })).body.terms).toEqual(['keep']);
    });
  });

  it('accepts exactly 1000 terms of 200 characters', async () => {
    // Prepare
    const { project } = await setup();
    const terms = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(4, '0')}${'t'.repeat(196)}`);

    // Act
    const replaced = await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms } });

    // Assess
    expect(replaced.status).toBe(200);
    expect(replaced.body.terms).toHaveLength(1000);
  });
});

describe('automatic flags', () => {
  it('label a message containing a block-list term (case-insensitive substring), record it and publish moderation.auto_flag', async () => {
    // Prepare
    const { project, author, authorId, moderator, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['Spam', 'scam'] } });

    // Act
    const posted = await api('/messages', { token: author, body: { roomId, content: 'Totally not SPAMMY content' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body.moderation).toEqual({ label: 'auto_flag', reason: 'block_list:spam' });
    const history = await api(`/rooms/${roomId}/messages`, { token: author });
    expect(history.body.messages).toEqual([posted.body]);
    const flags = await api('/admin/moderation/flags', { token: moderator });
    expect(flags.status).toBe(200);
    expect(flags.body.flags).toEqual([
      {
        roomId,
        messageId: posted.body.id,
        userId: authorId,
        label: 'auto_flag',
        reason: 'block_list:spam',
        matchedTerm: 'spam',
        createdAt: expect.any(String),
      },
    ]);
    // A flag is dated when it was raised, which is no earlier than the message.
    expect(Date.parse(flags.body.flags[0].createdAt)).toBeGreaterThanOrEqual(Date.parse(posted.body.createdAt));
    const events = await collectEvents(eventsOf(project.projectId, 'moderation.auto_flag'));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'moderation.auto_flag',
      projectId: project.projectId,
      payload: { roomId, messageId: posted.body.id, reason: 'block_list:spam' },
    });
  });

  it('leave clean messages alone: no label, no record', async () => {
    // Prepare
    const { project, author, moderator, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['spam'] } });

    // Act
    const posted = await api('/messages', { token: author, body: { roomId, content: 'a perfectly fine sp-am-free message' } });

    // Assess
    expect(posted.status).toBe(201);
    expect(posted.body.moderation).toBeNull();
    expect((await api('/admin/moderation/flags', { token: moderator })).body.flags).toEqual([]);
  });

  it('stop once the term is removed from the list', async () => {
    // Prepare
    const { project, author, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['spam'] } });
    const flagged = await api('/messages', { token: author, body: { roomId, content: 'spam' } });

    // Act
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: [] } });
    const clean = await api('/messages', { token: author, body: { roomId, content: 'spam' } });

    // Assess
    expect(flagged.body.moderation).not.toBeNull();
    expect(clean.body.moderation).toBeNull();
  });

  it('apply to imported messages and messages posted with the API key', async () => {
    // Prepare
    const { project, moderator, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['forbidden word'] } });

    // Act
    const imported = await api('/admin/messages/import', {
      apiKey: project.apiKey,
      body: { roomId, userId: 'legacy', content: 'the FORBIDDEN WORD again' },
    });
    const posted = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey, body: { userId: 'bot', content: 'a forbidden word' } });

    // Assess
    expect(imported.body.moderation).toEqual({ label: 'auto_flag', reason: 'block_list:forbidden word' });
    expect(posted.body.moderation).toEqual({ label: 'auto_flag', reason: 'block_list:forbidden word' });
    const flags = await api('/admin/moderation/flags', { token: moderator });
    expect(flags.body.flags.map((f: any) => f.messageId).sort()).toEqual([imported.body.id, posted.body.id].sort());
  });

  it('are listed newest first and limited by ?limit', async () => {
    // Prepare
    const { project, author, moderator, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['bad'] } });
    const posted: number[] = [];
    for (const content of ['bad 1', 'bad 2', 'bad 3']) {
      posted.push((await api('/messages', { token: author, body: { roomId, content } })).body.id);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }

    // Act
    const all = await api('/admin/moderation/flags', { token: moderator });
    const limited = await api('/admin/moderation/flags?limit=2', { token: moderator });

    // Assess
    expect(all.body.flags.map((f: any) => f.messageId)).toEqual([...posted].reverse());
    expect(limited.body.flags.map((f: any) => f.messageId)).toEqual([posted[2], posted[1]]);
  });

  describe.each(['0', '101', 'many'])('GET /admin/moderation/flags?limit=%s', (limit) => {
    it('answers 400 naming query.limit', async () => {
      // Prepare
      const { moderator } = await setup();

      // Act
      const flags = await api(`/admin/moderation/flags?limit=${limit}`, { token: moderator });

      // Assess
      expect(flags).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
      expect(flags.body.error.details).toContainEqual(expect.objectContaining({ field: 'query.limit' }));
    });
  });
});
