import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { deliverRoomBatches } from '#domain/realtime/coalesce';
import { observability } from '#edge/middlewares/observability';
import { traceId } from '#edge/middlewares/trace-id';
import { inRequestContext } from '#shared/request-context';

/**
 * The `RoomDelivery` stream consumer: the messages of coalesced (hot) rooms, a poll's window at a
 * time, as batch frames to connections that asked for them and single frames to the rest. A room
 * whose delivery failed is reported from its first record, as a stream needs (see publish-events.ts).
 */
export const handler = inRequestContext(
  middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(traceId() as MiddlewareObj<DynamoDBStreamEvent, unknown, Error, Context>)
    .use(observability<DynamoDBStreamEvent, Context>(() => ({ consumer: 'delivering coalesced rooms' })))
    .handler(async (event) => {
      const firstFailed = await deliverRoomBatches(event.Records);
      if (firstFailed === undefined) return { batchItemFailures: [] };
      const sequenceNumber = event.Records[firstFailed]?.dynamodb?.SequenceNumber ?? '';
      return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
    }),
);
