import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { api, ISO_TIMESTAMP } from '../support/api';
import { collectEvents, eventsOf, sqs } from '../support/events';
import { realtimeSuite } from '../support/realtime-suite';
import { connectUser } from '../support/ws';

/**
 * The inbox: notifications the `NotificationWriter` subscriber creates from domain events (an
 * @mention, a reply, a dm to a user with no open socket, a handoff task), the `notification` frame
 * on the user channel, reading them, and idempotency against a redelivered event.
 */

const { project, track, user, room } = realtimeSuite('notifications');

type Auth = { token: string };
const inbox = (auth: Auth, query = '') => api(`/notifications${query}`, auth);
const post = (auth: Auth, roomId: string, content: string, extra: Record<string, unknown> = {}) =>
  api('/messages', { ...auth, body: { roomId, content, ...extra } });

/** Polls the inbox until it holds `count` notifications (the subscriber runs after the send answered). */
async function inboxOf(auth: Auth, count: number, query = '') {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const listed = await inbox(auth, query);
    if (listed.body.notifications?.length >= count || Date.now() > deadline) return listed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The `message.created` event of the room's (only) message, from the project's event tap. */
async function messageEventOf(roomId: string) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const events = await collectEvents(eventsOf(project.projectId, 'message.created'), { count: 1, timeoutMs: 500 });
    const mine = events.find((event) => event.payload.roomId === roomId);
    if (mine) return mine;
  }
  throw new Error(`no message.created of ${roomId}`);
}

/** Sends an event to the NotificationWriter's own queue, as the topic would deliver it. */
async function deliverToWriter(event: unknown) {
  await sqs().send(
    new SendMessageCommand({ QueueUrl: inject('runtime').queueUrls.NotificationWriter, MessageBody: JSON.stringify(event) }),
  );
}

/**
 * Waits until the NotificationWriter is done with the (only) message of `roomId`, also when it wrote
 * nothing: its event reached the tap, which the topic fills in the same publish as the writer's
 * queue, and then that queue was seen empty, neither waiting nor in flight (taken off once handled).
 * Other suites share the queue, so one that keeps it busy past 15 s ends the wait instead of failing it.
 */
async function writerHandled(roomId: string) {
  await messageEventOf(roomId);
  const deadline = Date.now() + 15_000;
  while (Date.now() <= deadline) {
    const { Attributes = {} } = await sqs().send(
      new GetQueueAttributesCommand({
        QueueUrl: inject('runtime').queueUrls.NotificationWriter,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    if (Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible) === 0) return;
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits long enough for a subscriber that would write something to have written it: a later marker event arrives first. */
async function afterMarker(auth: Auth, marker: () => Promise<unknown>, count: number) {
  await marker();
  return inboxOf(auth, count);
}

describe('notifications created from events', () => {
  it('an @mention creates exactly one notification, sent as a notification frame on the user channel', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    const channel = track(await connectUser(bob.userId, bob.token));

    // Act
    const sent = await post({ token: alice.token }, roomId, `hello @${bob.userId} look`);
    const frame = await channel.next((f) => f.type === 'notification' && f.event === 'notification.created');
    const listed = await inboxOf({ token: bob.token }, 1);

    // Assess
    expect(sent.status).toBe(201);
    const notification = {
      id: expect.stringMatching(/^\d{15}-[0-9a-f]{16}$/),
      kind: 'mention',
      title: `${alice.userId} mentioned you in ${roomId}`,
      body: `hello @${bob.userId} look`,
      roomId,
      messageId: sent.body.id,
      data: { authorId: alice.userId },
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      readAt: null,
    };
    expect(frame).toEqual({
      type: 'notification',
      event: 'notification.created',
      data: notification,
      at: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(listed.body).toEqual({ notifications: [notification], unreadCount: 1, nextCursor: null });
    expect((await inbox({ token: alice.token })).body).toEqual({ notifications: [], unreadCount: 0, nextCursor: null });
  });

  it('a redelivered event creates nothing twice', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    await post({ token: alice.token }, roomId, `ping @${bob.userId}`);
    const event = await messageEventOf(roomId);
    await inboxOf({ token: bob.token }, 1);

    // Act: the same event twice more into the subscriber's own queue
    await deliverToWriter(event);
    await deliverToWriter(event);
    // A later mention, so the redeliveries ahead of it in the queue have been handled.
    const listed = await afterMarker({ token: bob.token }, () => post({ token: alice.token }, roomId, `again @${bob.userId}`), 2);
    await sleep(300);

    // Assess
    const after = await inbox({ token: bob.token });
    expect(listed.body.notifications).toHaveLength(2);
    expect(after.body.notifications.map((n: any) => n.body)).toEqual([`again @${bob.userId}`, `ping @${bob.userId}`]);
    expect(after.body.unreadCount).toBe(2);
  });
});

describe('each trigger', () => {
  it('a reply notifies the author of the parent message once, also when the reply mentions them too; the author never', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    const parent = await post({ token: bob.token }, roomId, 'a question');

    // Act
    const reply = await post({ token: alice.token }, roomId, 'an answer', { parent_id: parent.body.id });
    const both = await post({ token: alice.token }, roomId, `another answer @${bob.userId}`, { parent_id: parent.body.id });
    const ownReply = await post({ token: bob.token }, roomId, 'answering myself', { parent_id: parent.body.id });
    const listed = await inboxOf({ token: bob.token }, 2);
    await sleep(300);

    // Assess
    expect([reply.status, both.status, ownReply.status]).toEqual([201, 201, 201]);
    const after = await inbox({ token: bob.token });
    expect(after.body.notifications.map((n: any) => [n.kind, n.messageId, n.data])).toEqual([
      ['mention', both.body.id, { authorId: alice.userId, parentId: parent.body.id }],
      ['reply', reply.body.id, { authorId: alice.userId, parentId: parent.body.id }],
    ]);
    expect(listed.body.notifications[1].title).toBe(`${alice.userId} replied to you in ${roomId}`);
    expect((await inbox({ token: alice.token })).body.notifications).toEqual([]);
  });

  it('a dm notifies the other member only while they have no open socket', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const dm = await api('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });
    const roomId = dm.body.id as string;
    const channel = await connectUser(bob.userId, bob.token);

    // Act: one while bob is connected, one after he left. The writer looks for his sockets when it
    // handles the event, so he stays until it has, however long a loaded machine takes.
    await post({ token: alice.token }, roomId, 'while you are here');
    await writerHandled(roomId);
    await channel.close();
    await sleep(300);
    const away = await post({ token: alice.token }, roomId, 'while you are away');
    const listed = await inboxOf({ token: bob.token }, 1);
    await sleep(300);

    // Assess
    expect(listed.body.notifications.map((n: any) => [n.kind, n.messageId, n.title, n.body])).toEqual([
      ['dm', away.body.id, `New message from ${alice.userId}`, 'while you are away'],
    ]);
    expect((await inbox({ token: bob.token })).body.notifications).toHaveLength(1);
  });

  it('a handoff notifies the user whose task it is', async () => {
    // Prepare
    const alice = await user('alice');
    const mod = await user('mod', ['moderator']);
    const { roomId } = await room('group', [mod.userId], alice);
    await post({ token: alice.token }, roomId, 'I need a human');

    // Act
    const handoff = await api(`/rooms/${roomId}/handoff`, { token: mod.token, body: { note: 'taking it' } });
    const listed = await inboxOf({ token: mod.token }, 1);

    // Assess
    expect(handoff.status).toBe(201);
    expect(listed.body.notifications).toEqual([
      expect.objectContaining({
        kind: 'handoff_assigned',
        roomId,
        body: 'taking it',
        data: { handoffId: handoff.body.handoffId, agentTaskId: expect.stringMatching(/^task_/), takenBy: mod.userId },
      }),
    ]);
  });
});

describe('reading the inbox', () => {
  /** A user with `count` notifications, each a mention in its own message, oldest first. */
  async function mentioned(count: number) {
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    for (let i = 0; i < count; i++) await post({ token: alice.token }, roomId, `n${i} @${bob.userId}`);
    const listed = await inboxOf({ token: bob.token }, count);
    expect(listed.body.notifications).toHaveLength(count);
    return { bob: { token: bob.token }, ids: (listed.body.notifications as any[]).map((n) => n.id) };
  }

  it('pages newest first with cursors, and filters unread ones, with the unread count in every answer', async () => {
    // Prepare
    const { bob, ids } = await mentioned(5);

    // Act
    const first = await inbox(bob, '?limit=2');
    const second = await inbox(bob, `?limit=2&cursor=${first.body.nextCursor}`);
    const third = await inbox(bob, `?limit=2&cursor=${second.body.nextCursor}`);
    const read = await api(`/notifications/${ids[1]}/read`, { ...bob, method: 'POST' });
    const unread = await inbox(bob, '?unread=true&limit=3');
    const unreadNext = await inbox(bob, `?unread=true&limit=3&cursor=${unread.body.nextCursor}`);

    // Assess
    expect(first.body.notifications.map((n: any) => n.body)).toEqual([expect.stringMatching(/^n4 /), expect.stringMatching(/^n3 /)]);
    expect([...first.body.notifications, ...second.body.notifications, ...third.body.notifications].map((n: any) => n.id)).toEqual(ids);
    expect([first.body.unreadCount, third.body.nextCursor]).toEqual([5, null]);
    expect(read.body.notification).toMatchObject({ id: ids[1], readAt: expect.stringMatching(ISO_TIMESTAMP) });
    expect([...unread.body.notifications, ...unreadNext.body.notifications].map((n: any) => n.id)).toEqual([
      ids[0],
      ids[2],
      ids[3],
      ids[4],
    ]);
    expect([unread.body.unreadCount, unreadNext.body.nextCursor]).toEqual([4, null]);
  });

  it('reads one (again: the same answer, the count unchanged), then all; a missing id is 404', async () => {
    // Prepare
    const { bob, ids } = await mentioned(3);

    // Act
    const once = await api(`/notifications/${ids[0]}/read`, { ...bob, method: 'POST' });
    const twice = await api(`/notifications/${ids[0]}/read`, { ...bob, method: 'POST' });
    const afterOne = await inbox(bob);
    const all = await api('/notifications/read-all', { ...bob, method: 'POST' });
    const allAgain = await api('/notifications/read-all', { ...bob, method: 'POST' });
    const afterAll = await inbox(bob);
    const missing = await api(`/notifications/${'0'.repeat(15)}-${'0'.repeat(16)}/read`, { ...bob, method: 'POST' });

    // Assess
    expect([once.status, twice.status]).toEqual([200, 200]);
    expect(twice.body).toEqual(once.body);
    expect(afterOne.body.unreadCount).toBe(2);
    expect([all.body, allAgain.body]).toEqual([
      { read: 2, unreadCount: 0 },
      { read: 0, unreadCount: 0 },
    ]);
    expect(afterAll.body.notifications.every((n: any) => n.readAt !== null)).toBe(true);
    expect((await inbox(bob, '?unread=true')).body).toEqual({ notifications: [], unreadCount: 0, nextCursor: null });
    expect({ status: missing.status, code: missing.body.error?.code }).toEqual({ status: 404, code: 'notification_not_found' });
  });
});

describe('inbox webhook events', () => {
  it('notification.created and notification.read reach a webhook subscribed to them, with their payloads', async () => {
    // Prepare
    const registered = await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: 'https://example.com/inbox-hook', eventTypes: ['notification.created', 'notification.read'] },
    });
    expect(registered.status).toBe(201);
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    // The registration list is cached per instance for CACHE_TTL_MS.
    await sleep(Number(inject('runtime').env.CACHE_TTL_MS ?? 5000) + 200);

    // Act
    const sent = await post({ token: alice.token }, roomId, `hey @${bob.userId}`);
    const [created] = await collectEvents(eventsOf(project.projectId, 'notification.created'), { count: 1 });
    const id = (await inboxOf({ token: bob.token }, 1)).body.notifications[0].id;
    await api(`/notifications/${id}/read`, { token: bob.token, method: 'POST' });
    const [read] = await collectEvents(eventsOf(project.projectId, 'notification.read'), { count: 1 });

    // Assess
    expect(created?.payload).toEqual({
      notificationId: id,
      userId: bob.userId,
      kind: 'mention',
      title: `${alice.userId} mentioned you in ${roomId}`,
      body: `hey @${bob.userId}`,
      roomId,
      messageId: sent.body.id,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(read?.payload).toEqual({ userId: bob.userId, notificationIds: [id], all: false, readAt: expect.stringMatching(ISO_TIMESTAMP) });
  });
});

describe('the activity feed', () => {
  it('holds the mentions of the caller and replies to them, and room summaries of their rooms, newest first with cursors', async () => {
    // Prepare
    const alice = await user('alice');
    const bob = await user('bob');
    const { roomId } = await room('group', [bob.userId], alice);
    const parent = await post({ token: bob.token }, roomId, 'my message');
    const mention = await post({ token: alice.token }, roomId, `look @${bob.userId}`);
    const reply = await post({ token: alice.token }, roomId, 'replying', { parent_id: parent.body.id });
    await inboxOf({ token: bob.token }, 2);
    const summary = {
      id: randomUUID(),
      type: 'room.summary',
      projectId: project.projectId,
      payload: {
        roomId,
        summaryId: 'sum_1',
        summary: 'They talked.',
        messageCount: 3,
        fromMessageId: parent.body.id,
        toMessageId: reply.body.id,
        createdAt: new Date().toISOString(),
      },
      createdAt: new Date(Date.now() + 1000).toISOString(),
    };

    // Act: the summary as the topic delivers it, twice
    await deliverToWriter(summary);
    await deliverToWriter(summary);
    const feedOf = (token: string, query = '') => api(`/user/activity-feed${query}`, { token });
    const deadline = Date.now() + 10_000;
    while ((await feedOf(alice.token)).body.entries.length === 0 && Date.now() < deadline) await sleep(100);
    await sleep(300);
    const first = await feedOf(bob.token, '?limit=2');
    const second = await feedOf(bob.token, `?limit=2&cursor=${first.body.nextCursor}`);

    // Assess
    expect([...first.body.entries, ...second.body.entries].map((e: any) => [e.kind, e.messageId, e.actorId, e.text])).toEqual([
      ['room_summary', null, null, 'They talked.'],
      ['reply', reply.body.id, alice.userId, 'replying'],
      ['mention', mention.body.id, alice.userId, `look @${bob.userId}`],
    ]);
    expect(second.body.nextCursor).toBeNull();
    expect((await feedOf(alice.token)).body.entries.map((e: any) => e.kind)).toEqual(['room_summary']);
  });
});
