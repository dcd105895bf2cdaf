import { config } from '#shared/config';
import { addSignInFailure, findSignInFailures, lockSignIn } from '#shared/db/sign-in-failures';
import { RateLimitedError } from '#shared/errors';

/**
 * How long sign-in stays locked after the `failures`-th failure: none below the threshold, then
 * the base, doubled by each further failure, capped.
 */
export function lockoutMs(failures: number): number {
  const beyond = failures - config.SIGNIN_LOCKOUT_THRESHOLD;
  if (beyond < 0) return 0;
  const seconds = Math.min(config.SIGNIN_LOCKOUT_BASE_SECONDS * 2 ** Math.min(beyond, 30), config.SIGNIN_LOCKOUT_MAX_SECONDS);
  return seconds * 1000;
}

/**
 * Refuses with 429 `sign_in_locked` while the (project, user id) is locked; no password is checked
 * then, right or wrong. Answers whether failures are on record, so a success knows to clear them.
 */
export async function checkSignInLock(projectId: string, userId: string): Promise<{ failuresOnRecord: boolean }> {
  const now = Date.now();
  const record = await findSignInFailures(projectId, userId, now);
  if (record?.lockedUntil !== undefined && record.lockedUntil > now) {
    const retryAfter = Math.max(1, Math.ceil((record.lockedUntil - now) / 1000));
    throw new RateLimitedError(retryAfter, 'sign_in_locked', `Too many failed sign-ins for this user; retry after ${retryAfter} s`);
  }
  return { failuresOnRecord: record !== undefined };
}

/** Counts a failed sign-in, and locks the (project, user id) once the failures reach the threshold. */
export async function recordSignInFailure(projectId: string, userId: string): Promise<void> {
  const now = Date.now();
  const memory = config.SIGNIN_FAILURE_MEMORY_SECONDS;
  const failures = await addSignInFailure(projectId, userId, now, Math.ceil(now / 1000) + memory);
  const lockMs = lockoutMs(failures);
  if (lockMs === 0) return;
  const lockedUntil = now + lockMs;
  await lockSignIn(projectId, userId, lockedUntil, Math.ceil(lockedUntil / 1000) + memory);
}
