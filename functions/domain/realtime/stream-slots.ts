import { randomUUID } from 'node:crypto';
import { config } from '#shared/config';
import { dropStreamLeases, readStreamLeases, type StreamLeaseHolder, streamLeaseEntry, takeStreamLease } from '#shared/db/stream-leases';
import { RateLimitedError } from '#shared/errors';
import { logger } from '#shared/logger';

/**
 * A lease outlives its stream's longest life by this much, so that only a stream whose function
 * died without giving it back ever loses its lease to expiry.
 */
const LEASE_GRACE_MS = 30_000;

/** One open stream's hold on its user's and project's caps; `release` gives it back (never throws). */
export interface StreamSlot {
  release(): Promise<void>;
}

/**
 * Takes a slot of the user's `SSE_MAX_STREAMS_PER_USER` and the project's
 * `SSE_MAX_STREAMS_PER_PROJECT`, or refuses with 429 `too_many_streams` and `Retry-After` (when
 * the oldest stream of the full holder ends at the latest). A refusal first sweeps expired leases
 * out and tries again, so a crashed stream's slot comes back once its lease expires.
 */
export async function openStreamSlot(projectId: string, userId: string): Promise<StreamSlot> {
  const lease = { streamId: randomUUID(), expiresAt: Date.now() + config.SSE_MAX_DURATION_SECONDS * 1000 + LEASE_GRACE_MS };
  const caps = { user: config.SSE_MAX_STREAMS_PER_USER, project: config.SSE_MAX_STREAMS_PER_PROJECT };
  let full = await takeStreamLease(projectId, userId, lease, caps);
  if (full.length > 0) {
    const swept = await Promise.all(full.map((holder) => sweepExpired(projectId, userId, holder)));
    if (swept.some(Boolean)) full = await takeStreamLease(projectId, userId, lease, caps);
  }
  if (full.length > 0) throw await refusal(projectId, userId, full);
  const holders: StreamLeaseHolder[] = ['user', 'project'];
  return {
    async release() {
      try {
        await Promise.all(holders.map((holder) => dropStreamLeases(projectId, userId, holder, [streamLeaseEntry(lease)])));
      } catch (error) {
        // The lease expires on its own; the stream's answer must not fail for this.
        logger.warn('stream lease not given back', { error: error as Error, projectId, userId });
      }
    },
  };
}

/** Drops the holder's expired leases; answers whether there were any. */
async function sweepExpired(projectId: string, userId: string, holder: StreamLeaseHolder): Promise<boolean> {
  const now = Date.now();
  const expired = (await readStreamLeases(projectId, userId, holder)).filter((lease) => lease.expiresAt <= now).map((lease) => lease.entry);
  await dropStreamLeases(projectId, userId, holder, expired);
  return expired.length > 0;
}

async function refusal(projectId: string, userId: string, full: readonly StreamLeaseHolder[]): Promise<RateLimitedError> {
  const holder = full[0] as StreamLeaseHolder;
  const now = Date.now();
  const ends = (await readStreamLeases(projectId, userId, holder)).map((lease) => lease.expiresAt - LEASE_GRACE_MS);
  const retryAfter = Math.max(1, Math.ceil(((ends.length > 0 ? Math.min(...ends) : now) - now) / 1000));
  const [whose, cap] =
    holder === 'user' ? ['this user', config.SSE_MAX_STREAMS_PER_USER] : ['this project', config.SSE_MAX_STREAMS_PER_PROJECT];
  return new RateLimitedError(
    retryAfter,
    'too_many_streams',
    `Too many open streams: ${whose} may have ${cap} at once; retry after ${retryAfter} s`,
  );
}
