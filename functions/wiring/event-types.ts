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
