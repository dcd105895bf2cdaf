/**
 * The names of the domain events. The wiring table names them (which subscriber gets which
 * events), so they live on its floor; their payload schemas are the catalogue in
 * `functions/shared/events.ts`, which is checked to cover exactly these names.
 */
export const EVENT_TYPES = [
  'message.created',
  'mention',
  'moderation.auto_flag',
  'room.occupied',
  'room.vacated',
  'cache_miss',
  'member_joined',
  'member_left',
  'subscription_count',
  'client_event',
  'user.event',
  'report.created',
  'message.updated',
  'room.member_joined',
  'room.member_left',
  'room.summary',
  'handoff',
  'notification.created',
  'notification.read',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Attributes besides the type that the publisher sets on an event and a subscriber's filter policy
 * may match on (`EventSubscriber.attributeFilter`), so a subscriber with nothing to do for most
 * events of its type never receives them. Each is `'true'` or absent (an absent attribute matches no
 * allowlist); `functions/domain/events/message-attributes.ts` sets them, docs/architecture.md
 * ("Events between areas") tables them. Known from the write or cached, never read per event on the
 * sender's path, and erring towards `'true'`: a stale value may only wake a subscriber for nothing.
 * - `bridged`: a `message.created` in a room with a bridge.
 * - `agentMention`: a `message.created` by a non-agent that @-mentions an `agent:<handle>`.
 * - `notify`: a `message.created` that may need a notification: a mention, a reply, or a dm.
 * - `pushTargets`: a `message.created` in a room whose push roster has ever had an entry.
 * - `watched`: a `message.created` in a room someone has ever watched.
 * - `webhook`: any event whose type a webhook registration of its project subscribes to.
 */
export const EVENT_FILTER_ATTRIBUTES = ['bridged', 'agentMention', 'notify', 'pushTargets', 'watched', 'webhook'] as const;
export type EventFilterAttribute = (typeof EVENT_FILTER_ATTRIBUTES)[number];
