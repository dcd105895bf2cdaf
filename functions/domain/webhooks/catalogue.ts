/**
 * Every event type a webhook may subscribe to: the spec's table, plus `room.summary`,
 * `room.member_joined`, `message.updated` and `handoff`. Registration rejects anything else.
 */
export const WEBHOOK_EVENT_TYPES = [
  'message.created',
  'message.updated',
  'mention',
  'report.created',
  'moderation.auto_flag',
  'room.occupied',
  'room.vacated',
  'room.member_joined',
  'room.summary',
  'member_joined',
  'member_left',
  'subscription_count',
  'client_event',
  'cache_miss',
  'user.event',
  'handoff',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const known = new Set<string>(WEBHOOK_EVENT_TYPES);
export const isWebhookEventType = (type: string): type is WebhookEventType => known.has(type);
