import { acknowledgePush } from '#domain/push/acknowledgements';
import { httpHandler, ok } from '#edge/http';
import { deliveryAckBody } from './schemas';

export const handler = httpHandler('AcknowledgePushDelivery', { body: deliveryAckBody }, async ({ body, user }) =>
  ok(await acknowledgePush(user.projectId, user.userId, body.pushId)),
);
