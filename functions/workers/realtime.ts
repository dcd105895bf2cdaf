import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliverFanOut, type FanOutJob } from '#domain/realtime/broadcast';
import { type WelcomeJob, welcome } from '#domain/realtime/welcome';
import { logger } from '#shared/logger';

type RealtimeJob = WelcomeJob | FanOutJob;

/**
 * Realtime queue consumer: the opening frames of new connections, and fan-out batches of large
 * rooms. Jobs run in parallel; failed ones are reported back so SQS retries only those.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
  const failures: { itemIdentifier: string }[] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        const job = JSON.parse(record.body) as RealtimeJob;
        if (job.kind === 'welcome') await welcome(job);
        else if (job.kind === 'fanout') await deliverFanOut(job);
        else logger.warn('unknown realtime job', { messageId: record.messageId });
      } catch (error) {
        logger.error('realtime job failed', { error: error as Error, messageId: record.messageId });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
});
