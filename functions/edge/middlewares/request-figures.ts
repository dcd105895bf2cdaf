import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Principal } from '#shared/auth';
import { recordRequest } from '#shared/metrics';

/**
 * Leaves one figure per request of a project (route, status, latency) in the invocation's EMF
 * record, which `logMetrics` writes when the invocation ends: the stats aggregator sums them off the
 * request path, so counting a request costs no DynamoDB request. It stands above the error answer,
 * so it sees the status a failure became; a request that names no project (public routes, a caller
 * refused before authentication) is counted by CloudWatch's API metrics only.
 */
export function requestFigures<E>(
  routeId: string,
): MiddlewareObj<E, { statusCode?: number } | undefined, Error, Context & { principal?: Principal }> {
  // Keyed by the invocation's context: the local runtime runs many invocations of one module at once.
  const startedAt = new WeakMap<object, number>();
  const record = (
    request: { response?: { statusCode?: number } | null; context: Context & { principal?: Principal } },
    failed: boolean,
  ) => {
    const projectId = request.context.principal?.projectId;
    const started = startedAt.get(request.context);
    if (!projectId || started === undefined) return;
    const status = request.response?.statusCode ?? (failed ? 500 : 200);
    recordRequest({ projectId, route: routeId, status, latencyMs: performance.now() - started });
  };
  return {
    before: (request) => {
      startedAt.set(request.context, performance.now());
    },
    after: (request) => record(request, false),
    onError: (request) => record(request, true),
  };
}
