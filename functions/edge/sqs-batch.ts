import middy, { type MiddlewareObj } from '@middy/core';
import sqsPartialBatchFailure from '@middy/sqs-partial-batch-failure';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { observability } from '#edge/middlewares/observability';
import { traceId } from '#edge/middlewares/trace-id';
import { logger } from '#shared/logger';
import { inRequestContext, traceIdOfRecord, withTraceId } from '#shared/request-context';

/** What a batch handler returns: one outcome per record, in the batch's order. */
export type RecordOutcomes = PromiseSettledResult<unknown>[];

/**
 * The middy pipeline of an SQS consumer: a trace id of the batch's own (Lambda's request id) for
 * what is logged outside any record, the log context (`consumer: name`), then middy's stock
 * partial batch failure, which reports the records whose outcome is a rejection (each logged as
 * `<name> failed` with its message id), so SQS retries only those and, after `maxReceiveCount`,
 * moves them to the dead-letter queue. The handler gives it one settled outcome per record.
 */
export function sqsBatchPipeline(name: string) {
  return middy<SQSEvent, SQSBatchResponse | RecordOutcomes, Error, Context>()
    .use(traceId() as MiddlewareObj<SQSEvent, unknown, Error, Context>)
    .use(observability<SQSEvent, Context>(() => ({ consumer: name })))
    .use(
      sqsPartialBatchFailure({
        logger: (reason: unknown, record: SQSRecord) =>
          withTraceId(traceIdOfRecord(record), () =>
            logger.error(`${name} failed`, { error: reason as Error, messageId: record.messageId }),
          ),
      }),
    );
}

/**
 * Runs `work` for one record with the trace id the record carries current (`traceId` message
 * attribute, set by whoever sent it), so its log lines and whatever it sends on carry the id of
 * the request it started from.
 */
export const withRecordTraceId = <T>(record: SQSRecord, work: () => T): T => withTraceId(traceIdOfRecord(record), work);

/**
 * An SQS consumer of one record at a time: each record's JSON body is handled under its own trace
 * id, all in parallel, and the ones that fail (a body that is not JSON included) are reported back
 * as the batch's failures.
 */
export function sqsBatchHandler(name: string, handle: (body: unknown, record: SQSRecord) => Promise<void>) {
  return inRequestContext(
    sqsBatchPipeline(name).handler((event) =>
      Promise.allSettled(event.Records.map((record) => withRecordTraceId(record, async () => handle(JSON.parse(record.body), record)))),
    ),
  );
}
