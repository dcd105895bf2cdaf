import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { countRefusal, enforceRouteGuards, type GuardSubject } from '#domain/guards/route-guards';
import { HttpError } from '#shared/errors';
import { logger } from '#shared/logger';
import type { FeatureFlag, RateLimit } from '#wiring';

/**
 * Enforces the feature flag and the rate limit a wiring-table entry names (`enforceRouteGuards`):
 * 403 `feature_disabled` while the flag is off, `RateLimitedError` (429 with `Retry-After`) over the
 * limit. `subject` tells who is asking, from what the steps before it found (the caller, the
 * source IP, the connection). A limit that counts refusals is spent by the route's 401 and 404
 * answers, after the handler refused.
 */
export function routeGuards<E, C extends Context>(
  entry: { readonly flag?: FeatureFlag; readonly rateLimit?: RateLimit },
  subject: (request: Request<E, unknown, Error, C>) => GuardSubject,
): MiddlewareObj<E, unknown, Error, C> {
  // A request refused before it got here (around CloudFront: `originGuard`) has no trusted subject to count.
  const guarded = new WeakSet<C>();
  return {
    before: async (request) => {
      guarded.add(request.context);
      await enforceRouteGuards(entry, subject(request));
    },
    onError: async (request) => {
      const { error } = request;
      if (!(error instanceof HttpError) || entry.rateLimit?.counts !== 'refusals' || !guarded.has(request.context)) return;
      // The refusal stands whatever the count does: a failed count is logged, never answered.
      await countRefusal(entry, subject(request), error.statusCode).catch((failure: unknown) =>
        logger.error('counting a refusal failed', { error: failure as Error }),
      );
    },
  };
}
