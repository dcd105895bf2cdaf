import { replayDelivery } from '#domain/webhooks/deliveries';
import { httpHandler } from '#edge/http';
import * as z from '#shared/schema';

const params = z.object({ deliveryId: z.string().check(z.regex(/^whd_[0-9a-f]{32}$/, 'must be a delivery id')) });

/** 202: the delivery is pending again and its attempts run from the start. */
export const handler = httpHandler('ReplayWebhookDelivery', { params }, async ({ params, caller }) => ({
  status: 202,
  body: await replayDelivery(caller.projectId, params.deliveryId),
}));
