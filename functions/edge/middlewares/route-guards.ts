import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { enforceRouteGuards, type GuardSubject } from '#domain/guards/route-guards';
import type { FeatureFlag, RateLimit } from '#wiring';

/**
 * Enforces the feature flag and the rate limit a wiring-table entry names (`enforceRouteGuards`):
 * 403 `feature_disabled` while the flag is off, `RateLimitedError` (429 with `Retry-After`) over the
 * limit. `subject` tells who is asking, from what the steps before it found (the caller, the
 * source IP, the connection).
 */
export function routeGuards<E, C extends Context>(
  entry: { readonly flag?: FeatureFlag; readonly rateLimit?: RateLimit },
  subject: (request: Request<E, unknown, Error, C>) => GuardSubject,
): MiddlewareObj<E, unknown, Error, C> {
  return {
    before: async (request) => {
      await enforceRouteGuards(entry, subject(request));
    },
  };
}
