import { unsubscribeWebPush } from '#domain/push/targets';
import { httpHandler, noContent } from '#edge/http';
import { unsubscribeParams } from './schemas';

export const handler = httpHandler('UnsubscribeWebPush', { params: unsubscribeParams }, async ({ params, user }) => {
  await unsubscribeWebPush(user.projectId, user.userId, params.idOrEndpoint);
  return noContent();
});
