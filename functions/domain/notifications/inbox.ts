import { emitEvents, outboxPut } from '#domain/events/outbox';
import { sendToUserChannels } from '#domain/realtime/user-channel';
import { subscribersOf } from '#domain/webhooks/registrations';
import { config } from '#shared/config';
import {
  createNotificationParts,
  findNotification,
  markNotificationRead,
  markNotificationsRead,
  type NotificationItem,
  type NotificationKind,
  notificationIdFor,
  notificationsPage,
  resetUnreadCount,
  unreadCount,
  unreadNotificationIds,
} from '#shared/db/notification';
import { isConditionFailure, type TransactPart, transactWrite } from '#shared/db/transact';
import { NotFoundError } from '#shared/errors';
import { type DomainEvent, derivedEventId, domainEvent, type EventPayload } from '#shared/events';
import { logger } from '#shared/logger';

export interface NewNotification {
  readonly projectId: string;
  readonly userId: string;
  readonly kind: NotificationKind;
  /** Idempotency: one notification per (user, sourceId) however often it is created (an event id, `digest#2026-11-27`). */
  readonly sourceId: string;
  /** ISO; from the event, so a redelivery computes the same keys. */
  readonly createdAt: string;
  readonly title: string;
  readonly body: string;
  readonly roomId?: string;
  readonly messageId?: number;
  readonly data?: Record<string, unknown>;
}

/** The seconds-since-epoch a notification or feed entry created at `createdAt` expires at. */
export const expiryOf = (createdAt: string) => Math.floor(Date.parse(createdAt) / 1000) + config.NOTIFICATION_RETENTION_DAYS * 86_400;

/** A notification as the API answers it (and the `notification` frame and webhook carry it). */
export function toNotification(item: NotificationItem) {
  return {
    id: item.notificationId,
    kind: item.kind,
    title: item.title,
    body: item.body,
    roomId: item.roomId ?? null,
    messageId: item.messageId ?? null,
    data: item.data ?? {},
    createdAt: item.createdAt,
    readAt: item.readAt,
  };
}
export type Notification = ReturnType<typeof toNotification>;

/**
 * Creates a notification in the user's inbox, once per (user, sourceId): the notification, its
 * source marker, the unread counter and (when a webhook of the project subscribes) the
 * `notification.created` event are one transaction, so a second call, however concurrent, writes
 * nothing and answers `false`. A new one then goes out as a `notification` frame on the user's
 * channel; a failed send is logged, as the inbox holds it anyway.
 */
export async function createNotification(input: NewNotification): Promise<boolean> {
  if (Number.isNaN(Date.parse(input.createdAt))) throw new Error(`createNotification: createdAt ${input.createdAt} is not a date`);
  const item: NotificationItem = {
    projectId: input.projectId,
    userId: input.userId,
    notificationId: notificationIdFor(input.createdAt, input.sourceId),
    kind: input.kind,
    sourceId: input.sourceId,
    title: input.title,
    body: input.body,
    ...(input.roomId === undefined ? {} : { roomId: input.roomId }),
    ...(input.messageId === undefined ? {} : { messageId: input.messageId }),
    ...(input.data === undefined ? {} : { data: input.data }),
    createdAt: input.createdAt,
    readAt: null,
    ttl: expiryOf(input.createdAt),
  };
  const notification = toNotification(item);
  const parts: TransactPart[] = createNotificationParts(item);
  const webhookEvent = await webhookEventIfWanted(
    'notification.created',
    input.projectId,
    {
      notificationId: notification.id,
      userId: input.userId,
      kind: notification.kind,
      title: notification.title,
      body: notification.body,
      roomId: notification.roomId,
      messageId: notification.messageId,
      createdAt: notification.createdAt,
    },
    { id: derivedEventId(input.projectId, input.userId, 'notification.created', input.sourceId), createdAt: input.createdAt },
  );
  if (webhookEvent) parts.push(outboxPut(webhookEvent));
  try {
    await transactWrite(parts);
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
  await sendToUserChannels(input.projectId, [input.userId], {
    type: 'notification',
    event: 'notification.created',
    data: notification,
    at: new Date().toISOString(),
  }).catch((error: unknown) => logger.warn('sending a notification frame failed', { error: error as Error, userId: input.userId }));
  return true;
}

/**
 * The event when some webhook of the project subscribes to its type (the registrations are cached
 * per instance): inbox events are as frequent as messages, and an outbox write nobody reads is pure cost.
 */
async function webhookEventIfWanted<T extends 'notification.created' | 'notification.read'>(
  type: T,
  projectId: string,
  payload: EventPayload<T>,
  options: { id: string; createdAt: string },
): Promise<DomainEvent<T> | undefined> {
  if ((await subscribersOf(projectId, type)).length === 0) return undefined;
  return domainEvent(type, projectId, payload, options);
}

export const NOTIFICATIONS_PAGE_MAX = 100;

/**
 * A page of the user's inbox, newest first, with the unread count (the counter, not a count): two
 * requests in parallel, whatever the inbox holds.
 */
export async function listNotifications(projectId: string, userId: string, options: { limit: number; cursor?: string; unread: boolean }) {
  const [page, unread] = await Promise.all([
    notificationsPage(projectId, userId, {
      limit: Math.min(options.limit, NOTIFICATIONS_PAGE_MAX),
      unreadOnly: options.unread,
      ...(options.cursor === undefined ? {} : { after: options.cursor }),
    }),
    unreadCount(projectId, userId),
  ]);
  const notifications = page.notifications.map(toNotification);
  return { notifications, unreadCount: unread, nextCursor: page.more ? (notifications.at(-1)?.id ?? null) : null };
}

const notificationNotFound = () => new NotFoundError('notification_not_found', 'No such notification');

/** Marks one of the user's notifications read (idempotent); another user's id, or an expired one, is 404. */
export async function readNotification(projectId: string, userId: string, notificationId: string): Promise<Notification> {
  const readAt = new Date().toISOString();
  if (await markNotificationRead(projectId, userId, notificationId, readAt)) {
    await announceRead(projectId, userId, [notificationId], false, readAt);
    return toNotification({ ...(await readBack(projectId, userId, notificationId)), readAt });
  }
  // Read already (the same answer again), or not the caller's.
  return toNotification(await readBack(projectId, userId, notificationId));
}

async function readBack(projectId: string, userId: string, notificationId: string): Promise<NotificationItem> {
  const item = await findNotification(projectId, userId, notificationId);
  if (!item) throw notificationNotFound();
  return item;
}

/** Ids marked per transaction: 99 updates and the counter's, within DynamoDB's 100 parts. */
const READ_ALL_CHUNK = 99;

/**
 * Marks every unread notification of the user read, a transaction per 99 (each with the counter's
 * decrement), then clears whatever count notifications that expired unread left behind. A
 * notification created meanwhile may or may not be included; it is never lost from the count.
 */
export async function readAllNotifications(projectId: string, userId: string): Promise<{ read: number; unreadCount: number }> {
  const readAt = new Date().toISOString();
  let read = 0;
  for (;;) {
    const ids = await unreadNotificationIds(projectId, userId, READ_ALL_CHUNK);
    if (ids.length === 0) break;
    if (await markNotificationsRead(projectId, userId, ids, readAt)) {
      read += ids.length;
      await announceRead(projectId, userId, ids, true, readAt);
    } else {
      // One was read by another request meanwhile: take them one by one.
      const each = await Promise.all(ids.map((id) => markNotificationRead(projectId, userId, id, readAt)));
      const marked = ids.filter((_, index) => each[index]);
      read += marked.length;
      if (marked.length > 0) await announceRead(projectId, userId, marked, true, readAt);
    }
  }
  const left = await unreadCount(projectId, userId);
  if (left > 0 && (await unreadNotificationIds(projectId, userId, 1)).length === 0) {
    await resetUnreadCount(projectId, userId, left);
    return { read, unreadCount: await unreadCount(projectId, userId) };
  }
  return { read, unreadCount: left };
}

async function announceRead(projectId: string, userId: string, notificationIds: string[], all: boolean, readAt: string): Promise<void> {
  try {
    const event = await webhookEventIfWanted(
      'notification.read',
      projectId,
      { userId, notificationIds, all, readAt },
      { id: derivedEventId(projectId, userId, 'notification.read', readAt, ...notificationIds), createdAt: readAt },
    );
    if (event) await emitEvents([event]);
  } catch (error) {
    logger.error('emitting notification.read failed', { error: error as Error, userId });
  }
}
