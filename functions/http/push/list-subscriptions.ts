import { listWebSubscriptions } from '#domain/push/targets';
import { httpHandler, ok } from '#shared/http';

export const handler = httpHandler('ListWebPushSubscriptions', {}, async ({ user }) =>
  ok({ subscriptions: await listWebSubscriptions(user.projectId, user.userId) }),
);
