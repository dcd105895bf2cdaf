import { listDeliveries } from '#domain/webhooks/deliveries';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.object({ limit: z._default(queryInt(1, 100), 50) });

export const handler = httpHandler('ListWebhookDeliveries', { query }, async ({ query, caller }) =>
  ok({ deliveries: await listDeliveries(caller.projectId, query.limit) }),
);
