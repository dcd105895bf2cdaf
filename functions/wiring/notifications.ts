import type { Area } from './types.ts';

/** The inbox (notifications, their unread count) and the activity feed, both written by one subscriber of the outbox. */
export const notifications: Area = {
  id: 'Notifications',
  summary: 'The notifications inbox and the activity feed, written from domain events',
  httpRoutes: [
    {
      id: 'ListNotifications',
      method: 'GET',
      path: '/notifications',
      handler: 'http/notifications/list-notifications.ts',
      auth: 'user',
      bindings: ['table:read'],
      summary: "The caller's notifications, newest first (`unread=true` for unread ones), with the unread count",
    },
    {
      id: 'ReadNotification',
      method: 'POST',
      path: '/notifications/{notificationId}/read',
      handler: 'http/notifications/read-notification.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: "Mark one of the caller's notifications read",
    },
    {
      id: 'ReadAllNotifications',
      method: 'POST',
      path: '/notifications/read-all',
      handler: 'http/notifications/read-all-notifications.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: "Mark every notification of the caller's read",
    },
    {
      id: 'GetActivityFeed',
      method: 'GET',
      path: '/user/activity-feed',
      handler: 'http/notifications/get-activity-feed.ts',
      auth: 'user',
      bindings: ['table:read'],
      summary: "The caller's cross-room highlights (mentions, replies, room summaries), newest first",
    },
  ],
  eventSubscribers: [
    {
      id: 'NotificationWriter',
      eventTypes: ['message.created', 'handoff', 'room.summary'],
      // A message needs a notification only when it mentions, replies or is in a dm; the other types always do.
      attributeFilter: { notify: ['true'] },
      attributeFilterTypes: ['message.created'],
      handler: 'workers/write-notifications.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write', 'connections:manage'],
      summary: 'Notifications (mentions, replies, dms to offline users, handoff tasks) and activity feed entries, each once per event',
    },
  ],
};
