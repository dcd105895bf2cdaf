import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/logger';

/**
 * An SQS consumer: records are handled in parallel, and the ones that fail are reported back
 * (partial batch response), so SQS retries only those and, after `maxReceiveCount`, moves them to
 * the dead-letter queue.
 */
export function sqsBatchHandler(name: string, handle: (body: unknown, record: SQSRecord) => Promise<void>) {
  return middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
    const failures: { itemIdentifier: string }[] = [];
    await Promise.all(
      event.Records.map(async (record) => {
        try {
          await handle(JSON.parse(record.body), record);
        } catch (error) {
          logger.error(`${name} failed`, { error: error as Error, messageId: record.messageId });
          failures.push({ itemIdentifier: record.messageId });
        }
      }),
    );
    return { batchItemFailures: failures };
  });
}
