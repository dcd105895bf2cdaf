import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { logKeys } from '#edge/middlewares/log-keys';
import { tracing } from '#edge/middlewares/tracing';
import { logger } from '#shared/logger';
import { metrics } from '#shared/metrics';

/**
 * What every pipeline (HTTP, WebSocket, SSE, queues, tasks) observes, in one list so a new kind of
 * observation reaches every function at once: Powertools Logger's Lambda context (function name,
 * request id, cold start) on each log line, then the request's own keys, then Powertools Tracer
 * (`captureLambdaHandler`, with the trace id and route as X-Ray annotations); Metrics
 * (`logMetrics`) goes at the end of this list too. Each pipeline places the list after the trace
 * id and before the error answer, so they see the request's
 * keys and every error, including those the error answer turns into a response.
 */
export function observability<E, C extends Context>(
  keys: (request: Request<E, unknown, Error, C>) => Record<string, unknown>,
): MiddlewareObj<E, unknown, Error, C>[] {
  return [
    injectLambdaContext(logger, { resetKeys: true }) as MiddlewareObj<E, unknown, Error, C>,
    logKeys(keys),
    tracing(keys),
    // Writes the invocation's EMF record (the request figure of `request-figures.ts`, below it) on success and error alike.
    logMetrics(metrics) as MiddlewareObj<E, unknown, Error, C>,
  ];
}
