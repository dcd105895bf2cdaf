/**
 * What a notification is about. Constants only, for the event catalogue to read at load time
 * (importing `./notification`, which has operations, would bind the table name too early).
 */
export const NOTIFICATION_KINDS = ['mention', 'reply', 'dm', 'handoff_assigned', 'digest'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
