import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, ISO_TIMESTAMP, newUser, type TestProject, uniqueId } from '../support/api';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectWelcomed, type Frame, type RoomSocket } from '../support/ws';

/**
 * The message lifecycle on the shared runtime: edits, deletes (tombstones), reactions, pins (REST
 * and the `/pin` slash command) and reports, each with who may, the `message_updated` frame on a
 * real socket of the room, `message.updated` / `report.created` at a real webhook receiver, and
 * history showing the current state.
 */

let project: TestProject;
let receiver: WebhookReceiver;
const sockets: RoomSocket[] = [];
type User = { userId: string; token: string };
let author: User;
let member: User;
let owner: User;
let moderator: User;
let outsider: User;

beforeAll(async () => {
  project = await createTestProject('message-lifecycle');
  receiver = await startWebhookReceiver();
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: receiver.url, eventTypes: ['message.updated', 'report.created'] },
  });
  expect(registered.status).toBe(201);
  const users = await Promise.all(['author', 'member', 'owner', 'outsider'].map((name) => newUser(project, name)));
  [author, member, owner, outsider] = users as [User, User, User, User];
  moderator = await newUser(project, 'moderator', ['moderator']);
});

afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await receiver?.close();
});

/** A group room owned by `owner` with `author`, `member` and `moderator` (a project moderator) in it, and a message of `author`. */
async function roomWithMessage(options: { allowMemberPins?: boolean } = {}) {
  const roomId = uniqueId('room');
  const created = await api('/rooms', {
    token: owner.token,
    body: { id: roomId, type: 'group', members: [author.userId, member.userId, moderator.userId] },
  });
  expect(created.status).toBe(201);
  if (options.allowMemberPins !== undefined) {
    const patched = await api(`/rooms/${roomId}`, {
      method: 'PATCH',
      token: owner.token,
      body: { allowMemberPins: options.allowMemberPins },
    });
    expect(patched.body.allowMemberPins).toBe(options.allowMemberPins);
  }
  const sent = await api('/messages', { token: author.token, body: { roomId, content: 'the original words' } });
  expect(sent.status).toBe(201);
  return { roomId, message: sent.body as { id: number; [key: string]: unknown } };
}

const history = async (roomId: string) => (await api(`/rooms/${roomId}/messages`, { token: owner.token })).body.messages as any[];
const inHistory = async (roomId: string, messageId: number) => (await history(roomId)).find((message) => message.id === messageId);

/** The webhook bodies of one type the receiver got for a message. */
const webhookEvents = (type: string, messageId: number) =>
  receiver.requests
    .map((request) => JSON.parse(request.rawBody))
    .filter((event) => event.type === type && event.payload.messageId === messageId);

describe('PATCH /messages/{messageId}', () => {
  it('lets the author edit, keeping editedAt and the edit count, and nobody else (moderators included)', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const edit = (user: User, content: string) =>
      api(`/messages/${message.id}`, { method: 'PATCH', token: user.token, body: { roomId, content } });

    // Act
    const byMember = await edit(member, 'hijacked');
    const byModerator = await edit(moderator, 'moderated');
    const first = await edit(author, 'first edit');
    const second = await edit(author, 'second edit');

    // Assess
    expect(byMember).toMatchObject({ status: 403, body: { error: { code: 'not_message_author' } } });
    expect(byModerator).toMatchObject({ status: 403, body: { error: { code: 'not_message_author' } } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: message.id,
      content: 'first edit',
      editCount: 1,
      editedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(second.body).toMatchObject({ content: 'second edit', editCount: 2 });
    expect(await inHistory(roomId, message.id)).toMatchObject({ content: 'second edit', editCount: 2, editedAt: second.body.editedAt });
  });

  it('re-checks the content as a send does: the block list labels an edit, the schema refuses empty content', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const term = uniqueId('forbidden').toLowerCase();
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: [term] } });

    // Act
    const flagged = await api(`/messages/${message.id}`, {
      method: 'PATCH',
      token: author.token,
      body: { roomId, content: `now with ${term}` },
    });
    const empty = await api(`/messages/${message.id}`, { method: 'PATCH', token: author.token, body: { roomId, content: '' } });
    await api('/admin/moderation/blocklist', { method: 'PUT', apiKey: project.apiKey, body: { terms: [] } });

    // Assess
    expect(flagged.body.moderation).toEqual({ label: 'auto_flag', reason: `block_list:${term}` });
    expect(empty).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    const flags = (await api('/admin/moderation/flags', { apiKey: project.apiKey })).body.flags;
    expect(flags.map((flag: any) => flag.messageId)).toContain(message.id);
  });

  it('answers 404 for an unknown message and 409 message_deleted for a tombstone', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    await api(`/messages/${message.id}?roomId=${roomId}`, { method: 'DELETE', token: author.token });

    // Act
    const unknown = await api(`/messages/${message.id + 7}`, { method: 'PATCH', token: author.token, body: { roomId, content: 'x' } });
    const deleted = await api(`/messages/${message.id}`, { method: 'PATCH', token: author.token, body: { roomId, content: 'x' } });

    // Assess
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    expect(deleted).toMatchObject({ status: 409, body: { error: { code: 'message_deleted' } } });
  });
});

describe('DELETE /messages/{messageId}', () => {
  it("leaves a tombstone that keeps its replies' thread; the author, the room's owner and moderators may, other members not", async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const reply = (await api('/messages', { token: member.token, body: { roomId, content: 'a reply', parent_id: message.id } })).body;
    const second = (await api('/messages', { token: author.token, body: { roomId, content: 'second' } })).body;
    const third = (await api('/messages', { token: author.token, body: { roomId, content: 'third' } })).body;
    const remove = (user: User, id: number) => api(`/messages/${id}?roomId=${roomId}`, { method: 'DELETE', token: user.token });

    // Act
    const byMember = await remove(member, message.id);
    const byAuthor = await remove(author, message.id);
    const again = await remove(author, message.id);
    const byOwner = await remove(owner, second.id);
    const byModerator = await remove(moderator, third.id);

    // Assess
    expect(byMember).toMatchObject({ status: 403, body: { error: { code: 'not_message_author' } } });
    expect([byAuthor.status, again.status, byOwner.status, byModerator.status]).toEqual([204, 204, 204, 204]);
    const messages = await history(roomId);
    expect(messages.find((m) => m.id === message.id)).toMatchObject({
      content: '',
      attachments: [],
      userId: author.userId,
      deletedAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(messages.find((m) => m.id === reply.id)).toMatchObject({ content: 'a reply', parent_id: message.id, deletedAt: null });
    expect(messages.filter((m) => m.deletedAt !== null).map((m) => m.id)).toEqual([message.id, second.id, third.id]);
  });
});

describe('reactions', () => {
  it('adds one reaction per user and emoji, takes it back, refuses non-members and bad emoji, and history counts them', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const react = (user: User, emoji: string, method = 'PUT') =>
      api(`/messages/${message.id}/reactions/${encodeURIComponent(emoji)}?roomId=${roomId}`, { method, token: user.token });

    const counted = (expected: Record<string, number>) =>
      eventually(`the counts ${JSON.stringify(expected)} in history`, async () => {
        const reactions = (await inHistory(roomId, message.id))?.reactions ?? {};
        const same = Object.keys({ ...reactions, ...expected }).every((emoji) => reactions[emoji] === expected[emoji]);
        return same ? reactions : undefined;
      });

    // Act
    const added = await react(member, '👍');
    const repeated = await react(member, '👍');
    const shortcode = await react(author, ':party_parrot:');
    const ownerThumb = await react(owner, '👍');
    const beforeRemoval = await counted({ '👍': 2, ':party_parrot:': 1 });
    const removed = await react(owner, '👍', 'DELETE');
    const removedAgain = await react(owner, '👍', 'DELETE');
    const byOutsider = await react(outsider, '👍');
    const notEmoji = await react(member, 'ab');
    const twoEmoji = await react(member, '👍👍');

    // Assess
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ roomId, messageId: message.id, emoji: '👍', userId: member.userId, reacted: true });
    expect([repeated.status, shortcode.status, ownerThumb.status, removed.status, removedAgain.status]).toEqual([200, 201, 201, 204, 204]);
    expect(byOutsider).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(notEmoji).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'path.emoji' }] } } });
    expect(twoEmoji.status).toBe(400);
    expect(beforeRemoval).toEqual({ '👍': 2, ':party_parrot:': 1 });
    // The removal is counted on its own: no later reaction brings a recount.
    expect(await counted({ '👍': 1, ':party_parrot:': 1 })).toEqual({ '👍': 1, ':party_parrot:': 1 });
  });

  it('counts 396 concurrent reactions and removals on one message exactly', async () => {
    // Prepare
    const roomId = uniqueId('storm');
    const users = await Promise.all(Array.from({ length: 99 }, () => newUser(project, 'fan')));
    const created = await api('/rooms', {
      token: owner.token,
      body: { id: roomId, type: 'group', members: users.map((user) => user.userId) },
    });
    expect(created.status).toBe(201);
    const messageId = (await api('/messages', { token: owner.token, body: { roomId, content: 'react to me' } })).body.id as number;
    const emojis = ['👍', '🎉', '❤️', ':fire:'];
    const react = (user: User, emoji: string, method: string) =>
      api(`/messages/${messageId}/reactions/${encodeURIComponent(emoji)}?roomId=${roomId}`, { method, token: user.token });
    // The first 25 users react with 👍 before the storm and take it back during it.
    const leaving = users.slice(0, 25);
    for (const user of leaving) expect((await react(user, '👍', 'PUT')).status).toBe(201);
    const calls = [
      ...users.slice(25).flatMap((user) => emojis.map((emoji) => () => react(user, emoji, 'PUT'))),
      ...users.slice(0, 25).flatMap((user) => emojis.slice(1).map((emoji) => () => react(user, emoji, 'PUT'))),
      ...leaving.map((user) => () => react(user, '👍', 'DELETE')),
    ];

    // Act
    const statuses: number[] = [];
    const CONCURRENCY = 64;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < calls.length) {
          const call = calls[next++] as () => Promise<{ status: number }>;
          statuses.push((await call()).status);
        }
      }),
    );

    // Assess
    expect(calls.length).toBe(74 * 4 + 25 * 3 + 25);
    expect(statuses.filter((status) => status !== 201 && status !== 204)).toEqual([]);
    const expected = { '👍': 74, '🎉': 99, '❤️': 99, ':fire:': 99 };
    const counts = await eventually(
      'the exact counts',
      async () => {
        const reactions = (await api(`/rooms/${roomId}/messages`, { token: owner.token })).body.messages[0]?.reactions;
        return Object.entries(expected).every(([emoji, count]) => reactions?.[emoji] === count) ? reactions : undefined;
      },
      30_000,
    );
    expect(counts).toEqual(expected);
  }, 60_000);
});

describe('pins', () => {
  it("REST pins are the room owner's and moderators'; list and unpin; history carries the flag", async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const pin = (user: User, method = 'POST') => api(`/rooms/${roomId}/pins/${message.id}`, { method, token: user.token });

    // Act
    const byMember = await pin(member);
    const byAuthor = await pin(author);
    const byModerator = await pin(moderator);
    const byOwner = await pin(owner);
    const listed = await api(`/rooms/${roomId}/pins`, { token: member.token });
    const pinnedInHistory = await inHistory(roomId, message.id);
    const unpinByMember = await pin(member, 'DELETE');
    const unpinned = await pin(owner, 'DELETE');
    const listedAfter = await api(`/rooms/${roomId}/pins`, { token: member.token });

    // Assess
    expect(byMember).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(byAuthor.status).toBe(403);
    expect(byModerator).toMatchObject({ status: 201, body: { roomId, messageId: message.id, pinned: true } });
    expect(byOwner.status).toBe(200);
    expect(listed.body.pins).toEqual([
      {
        messageId: message.id,
        pinnedBy: moderator.userId,
        pinnedAt: expect.stringMatching(ISO_TIMESTAMP),
        message: expect.objectContaining({ id: message.id, pinned: true }),
      },
    ]);
    expect(pinnedInHistory.pinned).toBe(true);
    expect(unpinByMember.status).toBe(403);
    expect(unpinned.status).toBe(204);
    expect(listedAfter.body.pins).toEqual([]);
    expect((await inHistory(roomId, message.id)).pinned).toBe(false);
  });

  it('/pin as a reply pins its parent, /pin <id> pins that id, and neither is stored as a message', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const other = (await api('/messages', { token: author.token, body: { roomId, content: 'another' } })).body;
    const before = (await history(roomId)).length;

    // Act
    const byReply = await api('/messages', { token: owner.token, body: { roomId, content: '/pin', parent_id: message.id } });
    const byId = await api(`/rooms/${roomId}/messages`, { token: moderator.token, body: { content: `/pin ${other.id}` } });
    const bare = await api('/messages', { token: owner.token, body: { roomId, content: '/pin' } });
    const malformed = await api('/messages', { token: owner.token, body: { roomId, content: '/pin soon' } });
    const unknown = await api('/messages', { token: owner.token, body: { roomId, content: `/pin ${other.id + 3}` } });

    // Assess
    expect(byReply).toMatchObject({ status: 200, body: { command: 'pin', roomId, messageId: message.id, pinned: true, changed: true } });
    expect(byId).toMatchObject({ status: 200, body: { command: 'pin', messageId: other.id, pinned: true } });
    expect(bare).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.parent_id' }] } } });
    expect(malformed).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.content' }] } } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    const messages = await history(roomId);
    expect(messages).toHaveLength(before);
    expect(messages.filter((m) => m.pinned).map((m) => m.id)).toEqual([message.id, other.id]);
  });

  it('a member may /pin only in a room that allows member pins', async () => {
    // Prepare
    const closed = await roomWithMessage();
    const open = await roomWithMessage({ allowMemberPins: true });
    const slashPin = (room: { roomId: string; message: { id: number } }) =>
      api('/messages', { token: member.token, body: { roomId: room.roomId, content: '/pin', parent_id: room.message.id } });

    // Act
    const refused = await slashPin(closed);
    const allowed = await slashPin(open);
    const restInOpenRoom = await api(`/rooms/${open.roomId}/pins/${open.message.id}`, { method: 'DELETE', token: member.token });

    // Assess
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect(allowed).toMatchObject({ status: 200, body: { command: 'pin', pinned: true } });
    expect(restInOpenRoom.status).toBe(403);
    expect((await inHistory(closed.roomId, closed.message.id)).pinned).toBe(false);
    expect((await inHistory(open.roomId, open.message.id)).pinned).toBe(true);
  });
});

describe('message_updated frames and message.updated webhooks', () => {
  it('each change reaches a socket of the room and the webhook, with its pinned payload', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const socket = await connectWelcomed(roomId, member.token);
    sockets.push(socket);
    const updateFrame = (change: string) => (frame: Frame) =>
      frame.type === 'message_updated' && frame.change === change && frame.messageId === message.id;

    // Act
    await api(`/messages/${message.id}`, { method: 'PATCH', token: author.token, body: { roomId, content: 'edited live' } });
    await api(`/messages/${message.id}/reactions/${encodeURIComponent('🎉')}?roomId=${roomId}`, { method: 'PUT', token: owner.token });
    await api(`/messages/${message.id}/reactions/${encodeURIComponent('🎉')}?roomId=${roomId}`, { method: 'DELETE', token: owner.token });
    await api('/messages', { token: owner.token, body: { roomId, content: '/pin', parent_id: message.id } });
    await api(`/rooms/${roomId}/pins/${message.id}`, { method: 'DELETE', token: owner.token });
    await api(`/messages/${message.id}?roomId=${roomId}`, { method: 'DELETE', token: author.token });

    // Assess
    const frames = {
      edited: await socket.next(updateFrame('edited'), 10_000),
      reaction_added: await socket.next(updateFrame('reaction_added'), 10_000),
      reaction_removed: await socket.next(updateFrame('reaction_removed'), 10_000),
      pinned: await socket.next(updateFrame('pinned'), 10_000),
      unpinned: await socket.next(updateFrame('unpinned'), 10_000),
      deleted: await socket.next(updateFrame('deleted'), 10_000),
    };
    const base = { type: 'message_updated', roomId, messageId: message.id, at: expect.stringMatching(ISO_TIMESTAMP) };
    expect(frames.edited).toEqual({
      ...base,
      change: 'edited',
      userId: author.userId,
      content: 'edited live',
      editedAt: expect.any(String),
      editCount: 1,
    });
    expect(frames.reaction_added).toEqual({ ...base, change: 'reaction_added', userId: owner.userId, emoji: '🎉' });
    expect(frames.reaction_removed).toEqual({ ...base, change: 'reaction_removed', userId: owner.userId, emoji: '🎉' });
    expect(frames.pinned).toEqual({ ...base, change: 'pinned', userId: owner.userId, pinned: true });
    expect(frames.unpinned).toEqual({ ...base, change: 'unpinned', userId: owner.userId, pinned: false });
    expect(frames.deleted).toEqual({
      ...base,
      change: 'deleted',
      userId: author.userId,
      content: '',
      deletedAt: expect.any(String),
      pinned: false,
    });
    const hooks = await eventually('six message.updated webhooks', async () => {
      const events = webhookEvents('message.updated', message.id);
      return events.length >= 6 ? events : undefined;
    });
    expect(hooks.map((event) => event.payload.change).sort()).toEqual(
      ['deleted', 'edited', 'pinned', 'reaction_added', 'reaction_removed', 'unpinned'].sort(),
    );
    const { type: _type, ...editPayload } = frames.edited;
    expect(hooks.find((event) => event.payload.change === 'edited')).toMatchObject({
      type: 'message.updated',
      projectId: project.projectId,
      payload: editPayload,
    });
  });
});

describe('reports', () => {
  it('any member reports once per message; moderators list by status, resolve and dismiss; report.created reaches the webhook', async () => {
    // Prepare
    const { roomId, message } = await roomWithMessage();
    const report = (user: User, body: Record<string, unknown>) =>
      api(`/messages/${message.id}/reports`, { token: user.token, body: { roomId, ...body } });

    // Act
    const first = await report(member, { reason: 'spam', note: 'buy now links' });
    const second = await report(member, { reason: 'harassment' });
    const byOwner = await report(owner, { reason: 'other' });
    const byOutsider = await report(outsider, { reason: 'spam' });
    const badReason = await report(author, { reason: 'boring' });
    const openList = await api('/admin/moderation/reports?status=open', { token: moderator.token });
    const resolved = await api(`/admin/moderation/reports/${first.body.id}`, {
      method: 'PATCH',
      token: moderator.token,
      body: { status: 'resolved', note: 'removed' },
    });
    const resolvedAgain = await api(`/admin/moderation/reports/${first.body.id}`, {
      method: 'PATCH',
      token: moderator.token,
      body: { status: 'dismissed' },
    });
    const dismissed = await api(`/admin/moderation/reports/${byOwner.body.id}`, {
      method: 'PATCH',
      apiKey: project.apiKey,
      body: { status: 'dismissed' },
    });
    const unknown = await api(`/admin/moderation/reports/rpt_${'0'.repeat(24)}`, {
      method: 'PATCH',
      token: moderator.token,
      body: { status: 'dismissed' },
    });
    const resolvedList = await api('/admin/moderation/reports?status=resolved', { token: moderator.token });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^rpt_[0-9a-f]{24}$/),
      roomId,
      messageId: message.id,
      reporterId: member.userId,
      reason: 'spam',
      note: 'buy now links',
      status: 'open',
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      closedAt: null,
      closedBy: null,
      resolutionNote: null,
    });
    expect(second).toMatchObject({ status: 409, body: { error: { code: 'already_reported' } } });
    expect(byOwner.status).toBe(201);
    expect(byOutsider).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(badReason).toMatchObject({ status: 400, body: { error: { details: [{ field: 'body.reason' }] } } });
    expect(openList.body.reports.map((r: any) => r.id)).toEqual(expect.arrayContaining([first.body.id, byOwner.body.id]));
    expect(resolved.body).toMatchObject({ status: 'resolved', closedBy: moderator.userId, resolutionNote: 'removed' });
    expect(resolvedAgain).toMatchObject({ status: 409, body: { error: { code: 'report_closed' } } });
    expect(dismissed.body).toMatchObject({ status: 'dismissed', closedBy: 'service' });
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'report_not_found' } } });
    expect(resolvedList.body.reports.map((r: any) => r.id)).toContain(first.body.id);
    expect(resolvedList.body.reports.map((r: any) => r.id)).not.toContain(byOwner.body.id);
    const hooks = await eventually('two report.created webhooks', async () => {
      const events = webhookEvents('report.created', message.id);
      return events.length >= 2 ? events : undefined;
    });
    expect(hooks.find((event) => event.payload.reporterId === member.userId)?.payload).toEqual({
      roomId,
      messageId: message.id,
      reporterId: member.userId,
      reportId: first.body.id,
      reason: 'spam',
      note: 'buy now links',
      createdAt: first.body.createdAt,
    });
  });
});
