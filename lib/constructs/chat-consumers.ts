import { Duration } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { StreamConsumer } from '#wiring';
import type { ChatFunction } from './chat-function.ts';

/** What an SQS event source accepts as maximum concurrency (the Lambda `ScalingConfig` limits). */
export const sqsMaxConcurrencyRange = { min: 2, max: 1000 } as const;

/** The parts of a queue consumer or event subscriber the event source is built from. */
export interface SqsConsumerSettings {
  readonly id: string;
  readonly batchSize: number;
  readonly maxConcurrency: number;
  readonly timeoutSeconds: number;
}

/**
 * Feeds `fn` from `queue` with partial batch responses (`ReportBatchItemFailures`), so only the
 * records the handler reports as failed come back, and after `maxReceiveCount` receives go to the
 * queue's dead-letter queue. No batching window: a batch is handed over as soon as messages arrive.
 * The event source's maximum concurrency bounds how many batches run at once (and so the load a
 * consumer puts on the table and on `@connections`) without reserving concurrency for the function.
 *
 * Fails the synth unless the queue's visibility timeout exceeds the consumer's timeout (otherwise a
 * message could become visible again, and be processed twice, while its first batch still runs),
 * and for a `maxConcurrency` SQS event sources do not accept.
 */
export function addSqsConsumer(fn: ChatFunction, queue: IQueue, consumer: SqsConsumerSettings, visibilityTimeoutSeconds: number): void {
  assertVisibilityExceedsTimeout(consumer, visibilityTimeoutSeconds);
  assertMaxConcurrencyInRange(consumer);
  fn.addEventSource(
    new SqsEventSource(queue, { batchSize: consumer.batchSize, maxConcurrency: consumer.maxConcurrency, reportBatchItemFailures: true }),
  );
}

/**
 * How a table stream consumer retries a batch that fails: a handful of times, halving the batch on
 * each error so one bad record is isolated from the good ones around it, for at most an hour.
 * Then Lambda leaves the batch's coordinates in the consumer's failure queue (alarmed) and moves
 * on: a poisoned record holds the shard back for an hour, not the stream's whole 24 hours, and
 * nothing is dropped silently.
 */
export const streamRetryPolicy = { retryAttempts: 10, maxRecordAge: Duration.hours(1), bisectBatchOnError: true } as const;

/**
 * Feeds `fn` from the table's change stream, only the records its filter patterns match (Lambda
 * filters before invoking, so other writes cost no invocation). Partial batch responses retry from
 * the first failed record, within {@link streamRetryPolicy}; a batch that still fails then leaves a
 * note in `failures` (the records' coordinates, for a replay from the table).
 */
export function addStreamConsumer(fn: ChatFunction, table: ITableV2, consumer: StreamConsumer, failures: IQueue): void {
  fn.addEventSource(
    new DynamoEventSource(table, {
      // From the oldest record still in the stream: a first deploy misses nothing written meanwhile.
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: consumer.batchSize,
      // No wait for a fuller batch: Lambda's own polling of the shard is the window (RoomDelivery's coalescing).
      maxBatchingWindow: Duration.seconds(0),
      reportBatchItemFailures: true,
      ...streamRetryPolicy,
      onFailure: new SqsDlq(failures),
      filters: consumer.filters.map((pattern) => FilterCriteria.filter(pattern as Record<string, unknown>)),
    }),
  );
}

/** Throws unless the queue's visibility timeout is longer than the consumer function may run. */
export function assertVisibilityExceedsTimeout(consumer: SqsConsumerSettings, visibilityTimeoutSeconds: number): void {
  if (visibilityTimeoutSeconds <= consumer.timeoutSeconds) {
    throw new Error(
      `The queue of ${consumer.id} has a visibility timeout of ${visibilityTimeoutSeconds} s, which must exceed the ` +
        `${consumer.timeoutSeconds} s timeout of its consumer (functions/wiring/)`,
    );
  }
}

/** Throws unless the consumer's `maxConcurrency` is an integer an SQS event source accepts. */
export function assertMaxConcurrencyInRange(consumer: SqsConsumerSettings): void {
  const { min, max } = sqsMaxConcurrencyRange;
  if (!Number.isInteger(consumer.maxConcurrency) || consumer.maxConcurrency < min || consumer.maxConcurrency > max) {
    throw new Error(
      `Consumer ${consumer.id} has maxConcurrency ${consumer.maxConcurrency}, but an SQS event source accepts an integer ` +
        `from ${min} to ${max} (functions/wiring/)`,
    );
  }
}
