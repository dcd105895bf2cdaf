import { runDigestJob } from '#domain/digest/run';
import type { DigestJob } from '#domain/digest/start';
import { sqsBatchHandler } from '#edge/sqs-batch';

/** The digest queue's consumer: a page of projects or subscribers, or a batch of users to deliver to. */
export const handler = sqsBatchHandler('running a digest job', async (body) => {
  await runDigestJob(body as DigestJob);
});
