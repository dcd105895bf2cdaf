import { createHash } from 'node:crypto';
import { HANDOFF_STATES } from '#shared/db/handoff-states';
import { MEMBERSHIP_ORIGINS, memberRole } from '#shared/db/member-role';
import { MESSAGE_CHANGES } from '#shared/db/message-changes';
import { NOTIFICATION_KINDS } from '#shared/db/notification-kinds';
import * as z from '#shared/schema';
import { EVENT_FILTER_ATTRIBUTES, EVENT_TYPES, type EventFilterAttribute, type EventType } from '#wiring/event-types';

export { EVENT_FILTER_ATTRIBUTES, EVENT_TYPES, type EventFilterAttribute, type EventType };

/**
 * THE catalogue of domain events: type → payload schema, shared by the producers (which write
 * events with the changes they announce), the publisher (which checks each against its schema
 * before it reaches a subscriber) and the subscribers (webhooks offer every type; the catalogue is
 * the list `GET /webhooks/event-types` returns).
 */
const roomEvent = { roomId: z.string() };
const presence = z.object({ ...roomEvent, userId: z.string(), subscriptionCount: z.number().check(z.int()) });
const roomMoment = z.object({ ...roomEvent, at: z.string() });

export const eventCatalogue = {
  'message.created': z.object({
    ...roomEvent,
    messageId: z.number().check(z.int()),
    userId: z.string(),
    content: z.string(),
    parent_id: z.nullable(z.number().check(z.int())),
    attachments: z.array(z.string()),
    createdAt: z.string(),
    /** The room had a bridge when the message was sent (the bridge relay's filter policy matches on it). */
    bridged: z.optional(z.boolean()),
    /** The bridge the message came in through, from Slack, Discord or Matrix. */
    viaBridge: z.optional(z.string()),
  }),
  mention: z.object({ ...roomEvent, messageId: z.number().check(z.int()), mentionedUserId: z.string(), userId: z.string() }),
  'moderation.auto_flag': z.object({ ...roomEvent, messageId: z.number().check(z.int()), userId: z.string(), reason: z.string() }),
  'room.occupied': roomMoment,
  'room.vacated': roomMoment,
  cache_miss: roomMoment,
  member_joined: presence,
  member_left: presence,
  subscription_count: z.object({ ...roomEvent, subscriptionCount: z.number().check(z.int()) }),
  client_event: z.object({ ...roomEvent, event: z.string(), data: z.unknown() }),
  'user.event': z.object({ userId: z.string(), event: z.string(), data: z.unknown() }),
  /** A member reported a message to the room's moderators (one report per reporter and message). */
  'report.created': z.object({
    ...roomEvent,
    messageId: z.number().check(z.int()),
    reporterId: z.string(),
    reportId: z.string(),
    reason: z.string(),
    note: z.nullable(z.string()),
    createdAt: z.string(),
  }),
  /**
   * A stored message changed after it was sent: `change` says how, `userId` who did it (`system`
   * for a transcript), and the optional fields carry the message's state after the change that
   * the change concerns (the new content of an edit, the emoji and counts of a reaction, ...).
   */
  'message.updated': z.object({
    ...roomEvent,
    messageId: z.number().check(z.int()),
    change: z.enum(MESSAGE_CHANGES),
    userId: z.string(),
    at: z.string(),
    content: z.optional(z.string()),
    editedAt: z.optional(z.nullable(z.string())),
    editCount: z.optional(z.number().check(z.int())),
    deletedAt: z.optional(z.nullable(z.string())),
    emoji: z.optional(z.string()),
    reactions: z.optional(z.record(z.string(), z.number().check(z.int()))),
    pinned: z.optional(z.boolean()),
    transcript: z.optional(z.nullable(z.string())),
  }),
  /**
   * A user became a member of a room, on every path: the room's creation (`create`, each member and
   * the creator), `POST /rooms/{roomId}/members` or the service adding an agent (`add`), a
   * project member reaching a public room (`join`). `addedBy` is the acting user, `service` for the
   * API key, the user themself on a `join`. Written with the membership, in one transaction.
   */
  'room.member_joined': z.object({
    ...roomEvent,
    userId: z.string(),
    role: memberRole,
    joinedAt: z.string(),
    addedBy: z.string(),
    via: z.enum(MEMBERSHIP_ORIGINS),
  }),
  /** A membership ended (`DELETE /rooms/{roomId}/members/{userId}`): `removedBy` is the user themself when they left. */
  'room.member_left': z.object({
    ...roomEvent,
    userId: z.string(),
    role: memberRole,
    removedBy: z.string(),
    leftAt: z.string(),
  }),
  'room.summary': z.object({
    ...roomEvent,
    summaryId: z.string(),
    summary: z.string(),
    messageCount: z.number().check(z.int()),
    fromMessageId: z.number().check(z.int()),
    toMessageId: z.number().check(z.int()),
    createdAt: z.string(),
  }),
  /**
   * A human took the room over from AI (`POST /rooms/{roomId}/handoff`, state `human_active`), or
   * completed the handoff (`PATCH`, state `completed`, with `completedBy` and `disposition`).
   */
  handoff: z.object({
    ...roomEvent,
    handoffId: z.string(),
    state: z.enum(HANDOFF_STATES),
    agentTaskId: z.string(),
    agentId: z.nullable(z.string()),
    takenBy: z.string(),
    note: z.nullable(z.string()),
    contextSummary: z.string(),
    contextSource: z.enum(['ai', 'excerpt']),
    completedBy: z.optional(z.string()),
    disposition: z.optional(z.string()),
  }),
  /** A notification reached a user's inbox (`functions/domain/notifications/inbox.ts`); written only when a webhook subscribes. */
  'notification.created': z.object({
    notificationId: z.string(),
    userId: z.string(),
    kind: z.enum(NOTIFICATION_KINDS),
    title: z.string(),
    body: z.string(),
    roomId: z.nullable(z.string()),
    messageId: z.nullable(z.number().check(z.int())),
    createdAt: z.string(),
  }),
  /** A user read notifications: one (`POST /notifications/{id}/read`) or all (`read-all`, one event per batch of ids). */
  'notification.read': z.object({
    userId: z.string(),
    notificationIds: z.array(z.string()),
    all: z.boolean(),
    readAt: z.string(),
  }),
} as const satisfies Record<EventType, z.ZodMiniType>;

export type EventPayload<T extends EventType> = z.infer<(typeof eventCatalogue)[T]>;

/**
 * The message attribute the publisher sets to the event type on the topic; each subscriber's filter
 * policy matches on it (`lib/constructs/chat-subscribers.ts`, `lib/local/sqs-local.ts`).
 */
export const EVENT_TYPE_ATTRIBUTE = 'type';

const knownTypes = new Set<string>(EVENT_TYPES);
export const isEventType = (type: string): type is EventType => knownTypes.has(type);

/**
 * The envelope every subscriber receives, and the webhook body (without `id`): the spec's
 * `type`, `projectId`, `payload`, `createdAt`, plus an `id` consumers stay idempotent by.
 */
export type DomainEvent<T extends EventType = EventType> = {
  [K in T]: {
    readonly id: string;
    readonly type: K;
    readonly projectId: string;
    readonly payload: EventPayload<K>;
    readonly createdAt: string;
  };
}[T];

const envelope = z.object({
  id: z.string().check(z.minLength(1)),
  type: z.string(),
  projectId: z.string().check(z.minLength(1)),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.string(),
});

/** An event (or the item that should carry one) that breaks the catalogue: a bug, never a passing outage. */
export class EventCatalogueError extends Error {
  override readonly name = 'EventCatalogueError';
}

const issuesText = (error: z.core.$ZodError) => error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');

/** Checks an event against the catalogue; throws {@link EventCatalogueError} naming the offending fields otherwise. */
export function parseEvent(raw: unknown): DomainEvent {
  const parsed = envelope.safeParse(raw);
  if (!parsed.success) throw new EventCatalogueError(`Not an event envelope: ${issuesText(parsed.error)}`);
  const outer = parsed.data;
  if (!isEventType(outer.type)) throw new EventCatalogueError(`Unknown event type ${JSON.stringify(outer.type).slice(0, 80)}`);
  const payload = eventCatalogue[outer.type].safeParse(outer.payload);
  if (!payload.success) {
    throw new EventCatalogueError(`Event ${outer.id} (${outer.type}) does not match the catalogue: ${issuesText(payload.error)}`);
  }
  return { ...outer, payload: payload.data } as DomainEvent;
}

/** Builds an event checked against the catalogue at the producer, where a mistake is a bug to see at once. */
export function domainEvent<T extends EventType>(
  type: T,
  projectId: string,
  payload: EventPayload<T>,
  options: { id: string; createdAt?: string },
): DomainEvent<T> {
  return parseEvent({
    id: options.id,
    type,
    projectId,
    payload,
    createdAt: options.createdAt ?? new Date().toISOString(),
  }) as DomainEvent<T>;
}

/**
 * A UUID (version 8, name-based on SHA-256) for an event derived from stored data, such as the
 * `message.created` of a message item: the same item yields the same id however often the stream
 * hands it over, so every subscriber can recognise a repeat.
 */
export function derivedEventId(...parts: readonly (string | number)[]): string {
  const bytes = createHash('sha256').update(parts.join('\u0000')).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
