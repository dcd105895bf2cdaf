import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from '#shared/logger';
import { enterTraceId, leaveTraceId } from '#shared/request-context';
import { traceIdOf } from '#shared/trace-id';

/** What the `traceId` middleware puts on the context for the steps after it. */
export interface TraceIdContext extends Context {
  traceId: string;
}

interface TracedEvent {
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly requestContext?: { readonly requestId?: string };
}

interface Response {
  statusCode?: number;
  headers?: Record<string, string | number | boolean>;
}

export interface TraceIdOptions<E> {
  /** Take a well-formed `X-Trace-Id` header (headers lower-cased before this step). */
  readonly trustClient?: boolean;
  /** Answer with the id in an `x-trace-id` header. */
  readonly echo?: boolean;
  /** The id the event carries from upstream (a Step Functions task's input), taken when well formed. */
  readonly carried?: (event: E) => string | undefined;
}

/**
 * The invocation's trace id, on `context.traceId` for the log keys and the error answer, and
 * current in `#shared/request-context` for the code after it (log lines, the outbox, queues, the
 * retry schedule, webhook deliveries): the client's `X-Trace-Id` (`trustClient`) or the id the
 * event carries (`carried`) when well formed, else the gateway's request id, else Lambda's. With
 * `echo`, every answer, success or error, carries it back in `x-trace-id` (a header the handler
 * set itself wins), and a debug line notes the status it went out with. The id stops being
 * current when the invocation ends.
 */
export function traceId<E extends TracedEvent | object>(options: TraceIdOptions<E> = {}): MiddlewareObj<E, unknown, Error, TraceIdContext> {
  const echo = ({ response, context }: { response: unknown; context: TraceIdContext }) => {
    if (options.echo && typeof response === 'object' && response !== null && 'statusCode' in response) {
      const answer = response as Response;
      answer.headers = { 'x-trace-id': context.traceId, ...answer.headers };
      logger.debug('request answered', { status: answer.statusCode });
    }
    leaveTraceId();
  };
  return {
    before: ({ event, context }) => {
      const traced = event as TracedEvent;
      const offered = options.carried?.(event) ?? (options.trustClient ? traced.headers?.['x-trace-id'] : undefined);
      context.traceId = traceIdOf(offered, traced.requestContext?.requestId ?? context.awsRequestId);
      enterTraceId(context.traceId);
    },
    after: echo,
    onError: echo,
  };
}
