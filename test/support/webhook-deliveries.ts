import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { type DeliveryItem, deliveriesIndexKey, deliveryKey } from '#shared/db/webhook-delivery';
import { raw, table } from './raw-table';

/**
 * Writes a failed delivery straight to the table, as the retry schedule leaves one (the shared
 * runtime runs no queue consumers, so none arise). Its registration does not exist, so the attempt
 * a replay starts fails at once without sending anything.
 */
export async function seedFailedDelivery(projectId: string, deliveryId: string, body = '{"type":"message.created"}') {
  const now = new Date().toISOString();
  const item: DeliveryItem = {
    ...deliveryKey(projectId, deliveryId),
    gsi1pk: deliveriesIndexKey(projectId),
    gsi1sk: `${now}#${deliveryId}`,
    projectId,
    deliveryId,
    webhookId: `wh_${projectId}_${'0'.repeat(24)}`,
    eventType: 'message.created',
    body,
    status: 'failed',
    attempt_count: 5,
    next_attempt_at: null,
    last_http_status: 500,
    last_error: 'HTTP 500',
    createdAt: now,
    updatedAt: now,
  };
  await raw.send(new PutCommand({ TableName: table(), Item: item }));
}
