import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { currentTraceId } from '#shared/request-context';
import { tracer } from '#shared/tracer';

/** The log keys that are also X-Ray annotations (searchable in the console): which route, consumer or schedule ran. */
const ANNOTATED_KEYS = ['route', 'consumer', 'schedule'] as const;

/**
 * Powertools Tracer's `captureLambdaHandler` (a subsegment per invocation, cold start and service
 * annotations; responses are not captured, they hold users' data), plus the request's trace id
 * and its route or consumer as annotations, so `annotation.traceId = "<X-Trace-Id>"` finds the
 * X-Ray trace of a request a client quotes. Nothing happens while tracing is off (locally).
 */
export function tracing<E, C extends Context>(
  keys: (request: Request<E, unknown, Error, C>) => Record<string, unknown>,
): MiddlewareObj<E, unknown, Error, C> {
  const capture = captureLambdaHandler(tracer, { captureResponse: false }) as MiddlewareObj<E, unknown, Error, C>;
  return {
    before: async (request) => {
      await capture.before?.(request);
      if (!tracer.isTracingEnabled()) return;
      const traceId = currentTraceId();
      if (traceId) tracer.putAnnotation('traceId', traceId);
      const own = keys(request);
      for (const key of ANNOTATED_KEYS) if (typeof own[key] === 'string') tracer.putAnnotation(key, own[key]);
    },
    after: capture.after,
    onError: capture.onError,
  };
}
