import { describe, expect, it } from 'vitest';
import { api, createTestProject, uniqueId } from '../support/api';
import { collectEvents, eventsOf, type QueuedEvent } from '../support/events';
import { connect } from '../support/ws';

const isoTimestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
/** Every event carries an id of its own (a random UUID) so consumers stay idempotent when SQS delivers twice. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const eventId = expect.stringMatching(UUID);
const idOf = (event: QueuedEvent) => (event as QueuedEvent & { readonly id?: unknown }).id;

/** Each event has a UUID id and no two events share one. */
function expectDistinctIds(events: QueuedEvent[]) {
  const ids = events.map(idOf);
  for (const id of ids) expect(id).toEqual(eventId);
  expect(new Set(ids).size).toBe(events.length);
}

/** Each test gets its own project, so every event of that project on the shared queue is its own. */
async function setup(members: string[] = ['bob', 'carol']) {
  const project = await createTestProject('events');
  const aliceId = uniqueId('alice');
  const alice = await project.token(aliceId);
  const roomId = uniqueId('room');
  await api('/rooms', { token: alice, body: { id: roomId, type: 'group', members } });
  return { project, alice, aliceId, roomId };
}

const byType = (events: QueuedEvent[], type: string) => events.filter((event) => event.type === type);

describe('message.created', () => {
  it('is published for a message sent with POST /messages, with the envelope and the message', async () => {
    // Prepare
    const { project, alice, aliceId, roomId } = await setup();

    // Act
    const posted = await api('/messages', {
      token: alice,
      body: { roomId, content: 'hello queue', attachments: ['https://example.com/a.png'] },
    });
    const events = await collectEvents(eventsOf(project.projectId));

    // Assess
    expect(posted.status).toBe(201);
    expect(events).toEqual([
      {
        id: eventId,
        type: 'message.created',
        projectId: project.projectId,
        createdAt: isoTimestamp,
        payload: {
          roomId,
          messageId: posted.body.id,
          userId: aliceId,
          content: 'hello queue',
          parent_id: null,
          attachments: ['https://example.com/a.png'],
          createdAt: posted.body.createdAt,
        },
      },
    ]);
  });

  it('is published for POST /rooms/{roomId}/messages, imports (one per row) and WebSocket messages', async () => {
    // Prepare
    const { project, alice, roomId } = await setup();
    const socket = await connect(roomId, alice);

    // Act
    const byPath = await api(`/rooms/${roomId}/messages`, { token: alice, body: { content: 'by path' } });
    const single = await api('/admin/messages/import', { apiKey: project.apiKey, body: { roomId, userId: 'legacy', content: 'import' } });
    const batch = await api('/admin/messages/import/batch', {
      apiKey: project.apiKey,
      body: {
        messages: [
          { roomId, userId: 'legacy', content: 'batch 1' },
          { roomId, userId: 'legacy', content: 'batch 2' },
        ],
      },
    });
    socket.send({ type: 'message', content: 'over websocket', clientMessageId: 'ws-1' });
    const ack = await socket.next((frame) => frame.type === 'ack');
    await socket.close();
    const events = await collectEvents(eventsOf(project.projectId, 'message.created'), { count: 5 });

    // Assess
    expect([byPath.status, single.status, batch.status]).toEqual([201, 201, 200]);
    expect(events.map((event) => event.payload.messageId).sort()).toEqual(
      [byPath.body.id, single.body.id, ...batch.body.results.map((r: any) => r.message.id), ack.message.id].sort(),
    );
    expect(events.map((event) => event.payload.content).sort()).toEqual(['batch 1', 'batch 2', 'by path', 'import', 'over websocket']);
    expectDistinctIds(events);
  });

  it('is published once only: a repeated clientMessageId publishes nothing more', async () => {
    // Prepare
    const { project, alice, roomId } = await setup();
    const clientMessageId = uniqueId('cmid');
    await api('/messages', { token: alice, body: { roomId, content: 'once', clientMessageId } });

    // Act
    const again = await api('/messages', { token: alice, body: { roomId, content: 'once', clientMessageId } });
    const events = await collectEvents(eventsOf(project.projectId), { count: 1, settleMs: 1000 });

    // Assess
    expect(again.status).toBe(200);
    expect(events.map((event) => event.type)).toEqual(['message.created']);
  });

  it('is not published for refused messages', async () => {
    // Prepare
    const { project, alice, roomId } = await setup();
    const outsider = await project.token(uniqueId('outsider'));

    // Act
    const invalid = await api('/messages', { token: alice, body: { roomId, content: '' } });
    const forbidden = await api('/messages', { token: outsider, body: { roomId, content: 'let me in' } });
    const backdated = await api('/messages', { token: alice, body: { roomId, content: 'x', createdAt: '2020-01-01T00:00:00Z' } });
    const marker = await api('/messages', { token: alice, body: { roomId, content: 'marker' } });
    const events = await collectEvents(eventsOf(project.projectId), { count: 1, settleMs: 1000 });

    // Assess
    expect([invalid.status, forbidden.status, backdated.status, marker.status]).toEqual([400, 403, 403, 201]);
    expect(events.map((event) => event.payload.content)).toEqual(['marker']);
  });

  it('carries emoji content intact', async () => {
    // Prepare
    const { project, alice, roomId } = await setup();
    const content = 'party time 🎉👋🏽';

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content } });
    // The default wait: the event goes through the outbox, the stream and the topic, which a loaded machine takes seconds for.
    const events = await collectEvents(eventsOf(project.projectId, 'message.created'));

    // Assess
    expect(posted.status).toBe(201);
    expect(events.map((event) => event.payload.content)).toEqual([content]);
  });
});

describe('mention', () => {
  it('is published for each @-mentioned room member, once each, besides message.created', async () => {
    // Prepare
    const { project, alice, aliceId, roomId } = await setup(['bob', 'carol', 'dave']);

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content: '@bob and @carol, see this (cc @bob)' } });
    const events = await collectEvents(eventsOf(project.projectId), { count: 3, settleMs: 1000 });

    // Assess
    expect(posted.status).toBe(201);
    expect(byType(events, 'message.created')).toHaveLength(1);
    const mentions = byType(events, 'mention');
    expect(mentions.map((event) => event.payload.mentionedUserId).sort()).toEqual(['bob', 'carol']);
    expectDistinctIds(events);
    for (const mention of mentions) {
      expect(mention).toMatchObject({
        id: eventId,
        projectId: project.projectId,
        createdAt: isoTimestamp,
        payload: { roomId, messageId: posted.body.id, userId: aliceId },
      });
    }
  });

  it('is not published for non-members, for the author, or for e-mail addresses', async () => {
    // Prepare
    const { project, alice, aliceId, roomId } = await setup(['bob', 'example.com']);

    // Act
    const posted = await api('/messages', {
      token: alice,
      body: { roomId, content: `@stranger hi, note to self @${aliceId}, mail bob@example.com` },
    });
    const events = await collectEvents(eventsOf(project.projectId), { count: 1, settleMs: 1000 });

    // Assess
    expect(posted.status).toBe(201);
    expect(events.map((event) => event.type)).toEqual(['message.created']);
  });

  it('is published for a mention at the end of a sentence ("thanks @bob.")', async () => {
    // Prepare
    const { project, alice, roomId } = await setup(['bob']);

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content: 'thanks @bob.' } });
    // The default wait, as for any event: 2 s was too short for the outbox path on a loaded machine.
    const events = await collectEvents(eventsOf(project.projectId, 'mention'));

    // Assess
    expect(posted.status).toBe(201);
    expect(events.map((event) => event.payload.mentionedUserId)).toEqual(['bob']);
  });

  it('is published for the first MESSAGE_MAX_MENTIONS (20) distinct mentions only; the message keeps every one', async () => {
    // Prepare
    const members = Array.from({ length: 25 }, (_, index) => `many-${String(index).padStart(2, '0')}`);
    const { project, alice, roomId } = await setup(members);
    const content = members.map((userId) => `@${userId}`).join(' ');

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content } });
    // Waits for the 20 however long the outbox takes, then a settle for a 21st (one message's events are published together).
    const events = await collectEvents(eventsOf(project.projectId, 'mention'), { count: 20, settleMs: 1000 });

    // Assess
    expect(posted).toMatchObject({ status: 201, body: { content } });
    expect(events.map((event) => event.payload.mentionedUserId).sort()).toEqual(members.slice(0, 20));
  });

  it('is published for a mention followed by a comma', async () => {
    // Prepare
    const { project, alice, roomId } = await setup(['bob']);

    // Act
    await api('/messages', { token: alice, body: { roomId, content: 'hey @bob, lunch?' } });
    const events = await collectEvents(eventsOf(project.projectId, 'mention'));

    // Assess
    expect(events.map((event) => event.payload.mentionedUserId)).toEqual(['bob']);
  });
});

describe('moderation.auto_flag', () => {
  it('is published with message.created for a block-list match', async () => {
    // Prepare
    const { project, alice, aliceId, roomId } = await setup();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: ['badword'] } });

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content: 'such a BadWord here' } });
    const events = await collectEvents(eventsOf(project.projectId), { count: 2, settleMs: 500 });

    // Assess
    expect(events.map((event) => event.type).sort()).toEqual(['message.created', 'moderation.auto_flag']);
    expectDistinctIds(events);
    expect(byType(events, 'moderation.auto_flag')[0]).toEqual({
      id: eventId,
      type: 'moderation.auto_flag',
      projectId: project.projectId,
      createdAt: isoTimestamp,
      payload: { roomId, messageId: posted.body.id, userId: aliceId, reason: 'block_list:badword' },
    });
  });
});

describe('event id', () => {
  it('differs between two events of the same kind and content', async () => {
    // Prepare
    const { project, alice, roomId } = await setup();

    // Act
    await api('/messages', { token: alice, body: { roomId, content: 'same' } });
    await api('/messages', { token: alice, body: { roomId, content: 'same' } });
    const events = await collectEvents(eventsOf(project.projectId, 'message.created'), { count: 2 });

    // Assess
    expect(events).toHaveLength(2);
    expectDistinctIds(events);
  });
});
