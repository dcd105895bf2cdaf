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
 * events of its type never receives them: `bridged` (`'true'` on a `message.created` in a room
 * that has a bridge; `eventFilterAttributes` of `functions/shared/events.ts` sets it).
 */
export const EVENT_FILTER_ATTRIBUTES = ['bridged'] as const;
export type EventFilterAttribute = (typeof EVENT_FILTER_ATTRIBUTES)[number];
