import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from '#shared/logger';

/**
 * Appends the request's own keys (trace id, route, connection) to every log line of the
 * invocation. They are temporary keys: Powertools' `injectLambdaContext({ resetKeys: true })`, run
 * before this step, removes them when the invocation ends, on success or error.
 */
export function logKeys<E, C extends Context>(
  keys: (request: Request<E, unknown, Error, C>) => Record<string, unknown>,
): MiddlewareObj<E, unknown, Error, C> {
  return {
    before: (request) => {
      logger.appendKeys(keys(request));
    },
  };
}
