import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { type MessageActivity, notifyRoomWatchers } from '#domain/realtime/watch-notifications';
import { dispatchEvent } from '#domain/webhooks/deliveries';
import { logger } from '#shared/logger';
import type { DomainEvent } from '#shared/queue';

/**
 * Events queue consumer: every domain event reaches the webhook registrations subscribed to it,
 * and a `message.created` the user channels of the room's watchers.
 * Records that fail are reported back (partial batch response) so SQS retries only those, and
 * after `maxReceiveCount` moves them to the dead-letter queue.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const failures: { itemIdentifier: string }[] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        const domainEvent = JSON.parse(record.body) as DomainEvent & { id?: string };
        await Promise.all([
          dispatchEvent(domainEvent, domainEvent.id ?? record.messageId),
          domainEvent.type === 'message.created'
            ? notifyRoomWatchers(domainEvent.projectId, domainEvent.payload as unknown as MessageActivity)
            : undefined,
        ]);
      } catch (error) {
        logger.error('dispatching an event failed', { error: error as Error, messageId: record.messageId });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
});
