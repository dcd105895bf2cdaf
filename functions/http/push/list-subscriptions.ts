import { listWebSubscriptions } from '#domain/push/targets';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ListWebPushSubscriptions', {}, async ({ user }) =>
  ok({ subscriptions: await listWebSubscriptions(user.projectId, user.userId) }),
);
