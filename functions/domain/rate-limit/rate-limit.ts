import { countInWindow } from '#shared/db/rate-limit-window';
import { RateLimitedError } from '#shared/errors';

const MINUTE_MS = 60_000;

/**
 * Fixed windows (one minute unless `windowMs` says otherwise), one write per key and no read.
 * Several keys (user, room, tenant, ip) are counted in parallel.
 */
export async function consumeRateLimit(
  projectId: string,
  bucket: string,
  keys: readonly string[],
  limitPerWindow: number,
  windowMs = MINUTE_MS,
): Promise<void> {
  const now = Date.now();
  const window = Math.floor(now / windowMs);
  const windowEnd = (window + 1) * windowMs;
  const ttl = Math.ceil(windowEnd / 1000) + 60;
  const counts = await Promise.all(keys.map((key) => countInWindow(projectId, bucket, key, window, ttl)));
  if (counts.some((count) => count > limitPerWindow)) {
    throw new RateLimitedError(Math.max(1, Math.ceil((windowEnd - now) / 1000)));
  }
}
