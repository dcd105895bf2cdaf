import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { api, ISO_TIMESTAMP } from '../support/api';
import { collectEvents, eventsOf } from '../support/events';
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
    const runtime = inject('runtime');
    const sqs = new SQSClient({
      endpoint: runtime.env.AWS_ENDPOINT_URL_SQS,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      useQueueUrlAsEndpoint: false,
    });
    for (let i = 0; i < 2; i++) {
      await sqs.send(new SendMessageCommand({ QueueUrl: runtime.queueUrls.NotificationWriter, MessageBody: JSON.stringify(event) }));
    }
    // A later mention, so the redeliveries ahead of it in the queue have been handled.
    const listed = await afterMarker({ token: bob.token }, () => post({ token: alice.token }, roomId, `again @${bob.userId}`), 2);
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Assess
    const after = await inbox({ token: bob.token });
    expect(listed.body.notifications).toHaveLength(2);
    expect(after.body.notifications.map((n: any) => n.body)).toEqual([`again @${bob.userId}`, `ping @${bob.userId}`]);
    expect(after.body.unreadCount).toBe(2);
  });
});
