import { type PushBatch, sendPushBatch } from '#domain/push/send';
import { sqsBatchHandler } from '#edge/sqs-batch';

/** The push queue's consumer: one batch of a large room's deliveries per message. */
export const handler = sqsBatchHandler('sending a push batch', async (body) => {
  await sendPushBatch(body as PushBatch);
});
