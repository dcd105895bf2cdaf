import { type DigestJob, runDigestJob } from '#domain/digest/run';
import { sqsBatchHandler } from '#edge/sqs-batch';

/** The digest queue's consumer: a page of projects or subscribers, or a batch of users to deliver to. */
export const handler = sqsBatchHandler('running a digest job', async (body) => {
  await runDigestJob(body as DigestJob);
});
