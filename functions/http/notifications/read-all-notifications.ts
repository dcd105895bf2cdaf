import { readAllNotifications } from '#domain/notifications/inbox';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ReadAllNotifications', {}, async ({ user }) =>
  ok(await readAllNotifications(user.projectId, user.userId)),
);
