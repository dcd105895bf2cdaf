import { config } from '#shared/config';
import { digestSubscribersPage } from '#shared/db/digest-preference';
import { digestProjectsPage } from '#shared/db/digest-project';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { sendDigestJobs } from '#shared/queue';
import { deliverDigests } from './deliver';
import type { DigestJob } from './start';

/** The jobs of a digest run, one per invocation (`start.ts` explains the chain and queues the first). */

const PROJECTS_PER_PAGE = 100;

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size));

/** One job of a run. */
export async function runDigestJob(job: DigestJob): Promise<void> {
  switch (job.kind) {
    case 'projects': {
      const page = await digestProjectsPage({ after: job.after, limit: PROJECTS_PER_PAGE });
      await sendDigestJobs([
        ...page.projectIds.map((projectId): DigestJob => ({ kind: 'subscribers', projectId, digestDate: job.digestDate })),
        ...(page.next ? [{ kind: 'projects', digestDate: job.digestDate, after: page.next } satisfies DigestJob] : []),
      ]);
      return;
    }
    case 'subscribers': {
      const limit = Math.min(config.DIGEST_SUBSCRIBERS_PER_PAGE, job.remaining ?? Number.POSITIVE_INFINITY);
      if (limit <= 0) return;
      const page = await digestSubscribersPage(job.projectId, { after: job.after, limit });
      const remaining = job.remaining === undefined ? undefined : job.remaining - page.userIds.length;
      const more = page.next !== undefined && (remaining === undefined || remaining > 0);
      await sendDigestJobs([
        ...chunks(page.userIds, config.DIGEST_USERS_PER_JOB).map(
          (userIds): DigestJob => ({ kind: 'users', projectId: job.projectId, digestDate: job.digestDate, userIds }),
        ),
        ...(more ? [{ ...job, after: page.next, ...(remaining === undefined ? {} : { remaining }) } satisfies DigestJob] : []),
      ]);
      return;
    }
    case 'users': {
      const result = await deliverDigests(job.projectId, job.digestDate, job.userIds);
      countMetric('digest_user_jobs');
      logger.info('digest.users_delivered', { projectId: job.projectId, digestDate: job.digestDate, ...result });
      return;
    }
  }
}
