import { logger } from '#shared/logger';
import { sendDigestJobs } from '#shared/queue';

/**
 * A digest run is a chain of queued jobs, never a loop in one invocation: a `projects` job pages
 * through the directory of projects with subscribers (the scheduled run, for every project), a
 * `subscribers` job pages through one project's enabled subscribers (the admin run starts here)
 * and queues their users in `users` jobs, each delivered by one worker invocation. Each page job
 * queues the next page, so a run of any size is bounded work per invocation. Starting a run only
 * queues its first job (this module is all the routes and the schedule load); the jobs are
 * `run.ts`'s.
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
