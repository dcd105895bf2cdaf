import { config } from '#shared/config';
import { digestSubscribersPage } from '#shared/db/digest-preference';
import { digestProjectsPage } from '#shared/db/digest-project';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { sendDigestJobs } from '#shared/queue';
import { deliverDigests } from './deliver';

/**
 * A digest run is a chain of queued jobs, never a loop in one invocation: a `projects` job pages
 * through the directory of projects with subscribers (the scheduled run, for every project), a
 * `subscribers` job pages through one project's enabled subscribers (the admin run starts here)
 * and queues their users in `users` jobs, each delivered by one worker invocation. Each page job
 * queues the next page, so a run of any size is bounded work per invocation.
 */
export type DigestJob =
  | { readonly kind: 'projects'; readonly digestDate: string; readonly after?: string }
  | {
      readonly kind: 'subscribers';
      readonly projectId: string;
      readonly digestDate: string;
      readonly after?: string;
      /** Users the run may still queue (the admin run's `maxUsers`); unlimited when absent. */
      readonly remaining?: number;
    }
  | { readonly kind: 'users'; readonly projectId: string; readonly digestDate: string; readonly userIds: readonly string[] };

const PROJECTS_PER_PAGE = 100;
export const MAX_DIGEST_USERS = 100_000;

/** The UTC calendar date of an instant: the digest date of a run started then. */
export const digestDateOf = (instant: Date) => instant.toISOString().slice(0, 10);

/** The scheduled run: queues the first page of the project directory. */
export async function startScheduledDigest(at: Date): Promise<{ digestDate: string }> {
  const digestDate = digestDateOf(at);
  await sendDigestJobs([{ kind: 'projects', digestDate } satisfies DigestJob]);
  logger.info('digest.run_started', { digestDate, scope: 'all projects' });
  return { digestDate };
}

/** `POST /admin/digest/run`: one project's run for a date, at most `maxUsers` users. */
export async function startProjectDigest(projectId: string, digestDate: string, maxUsers: number) {
  await sendDigestJobs([{ kind: 'subscribers', projectId, digestDate, remaining: maxUsers } satisfies DigestJob]);
  logger.info('digest.run_started', { projectId, digestDate, maxUsers });
  return { digestDate, maxUsers, status: 'queued' as const };
}

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
