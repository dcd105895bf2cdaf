import { readNotification } from '#domain/notifications/inbox';
import { httpHandler, ok } from '#edge/http';
import { notificationParams } from './schemas';

export const handler = httpHandler('ReadNotification', { params: notificationParams }, async ({ params, user }) =>
  ok({ notification: await readNotification(user.projectId, user.userId, params.notificationId) }),
);
