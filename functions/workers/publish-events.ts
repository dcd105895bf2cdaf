import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { publishRecords } from '#domain/events/publisher';
import { measureRoomHeat } from '#domain/realtime/room-heat';
import { observability } from '#edge/middlewares/observability';
import { traceId } from '#edge/middlewares/trace-id';
import { inRequestContext } from '#shared/request-context';

/**
 * The table stream's consumer: the domain events of new messages and outbox items go to the event
 * topic. A record whose events did not all get there is reported as the batch's failure, so the
 * stream hands it (and what follows it) over again, and nothing written is ever left unpublished.
 * (middy's stock partial batch failure is SQS's: any record may fail alone there, where a stream
 * must stop at the first.)
 */
export const handler = inRequestContext(
  middy<DynamoDBStreamEvent, DynamoDBBatchResponse, Error, Context>()
    .use(traceId() as MiddlewareObj<DynamoDBStreamEvent, unknown, Error, Context>)
    .use(observability<DynamoDBStreamEvent, Context>(() => ({ consumer: 'publishing events' })))
    .handler(async (event) => {
      // Off the request path: the publisher sees every message, so it measures which rooms run hot.
      const [firstFailed] = await Promise.all([publishRecords(event.Records), measureRoomHeat(event.Records)]);
      if (firstFailed === undefined) return { batchItemFailures: [] };
      const sequenceNumber = event.Records[firstFailed]?.dynamodb?.SequenceNumber ?? '';
      return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
    }),
);
