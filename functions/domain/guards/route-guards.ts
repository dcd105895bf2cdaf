import { flagEnabled } from '#domain/flags/feature-flags';
import { consumeRateLimit } from '#domain/rate-limit/rate-limit';
import { config } from '#shared/config';
import { ForbiddenError } from '#shared/errors';
import type { FeatureFlag, RateLimit } from '#wiring';

/** Who is asking, as far as a route's flag and rate limit care. */
export interface GuardSubject {
  /** `undefined` on public routes: the defaults of the flags apply, limits count in a shared space. */
  readonly projectId?: string;
  /** The calling user; a service principal (API key) has none and is not user-limited. */
  readonly userId?: string;
  readonly sourceIp?: string;
  readonly connectionId?: string;
}

/** Rate limits of public routes count here: there is no project to count them in. */
const PUBLIC_SPACE = '_public';

/**
 * The one place a wiring-table entry's feature flag and rate limit are enforced, for HTTP routes
 * (`functions/edge/http.ts`) and WebSocket frames (`functions/edge/frames.ts`) alike: a flag
 * that is off answers 403 `feature_disabled`; over the limit, `RateLimitedError` (429 with
 * `Retry-After`, or an `error` frame with `retryAfter`).
 */
export async function enforceRouteGuards(entry: { readonly flag?: FeatureFlag; readonly rateLimit?: RateLimit }, subject: GuardSubject) {
  const { flag, rateLimit } = entry;
  if (flag && !(await flagEnabled(subject.projectId, flag))) {
    throw new ForbiddenError(`The ${flag} feature is turned off for this project`, 'feature_disabled');
  }
  if (!rateLimit) return;
  const key = rateLimitKey(rateLimit, subject);
  if (key === undefined) return;
  await consumeRateLimit(
    subject.projectId ?? PUBLIC_SPACE,
    rateLimit.bucket,
    [key],
    config[rateLimit.setting],
    (rateLimit.windowSeconds ?? 60) * 1000,
  );
}

function rateLimitKey(rateLimit: RateLimit, subject: GuardSubject): string | undefined {
  switch (rateLimit.per) {
    case 'ip':
      return `ip:${subject.sourceIp ?? 'unknown'}`;
    case 'user':
      return subject.userId === undefined ? undefined : `user:${subject.userId}`;
    case 'connection':
      if (!subject.connectionId) throw new Error(`The ${rateLimit.bucket} limit counts per connection, which only frames have`);
      return subject.connectionId;
  }
}
