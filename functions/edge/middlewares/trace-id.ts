import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
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
  headers?: Record<string, string | number | boolean>;
}

/**
 * The request's trace id, on `context.traceId` for the log keys and the error answer: the client's
 * `X-Trace-Id` when it is well formed (`trustClient`, headers lower-cased before this step), else the
 * gateway's request id. With `echo`, every answer, success or error, carries it back in `x-trace-id`;
 * a header the handler set itself wins.
 */
export function traceId(options: { trustClient: boolean; echo: boolean }): MiddlewareObj<TracedEvent, unknown, Error, TraceIdContext> {
  const echo = ({ response, context }: { response: unknown; context: TraceIdContext }) => {
    if (!options.echo || typeof response !== 'object' || response === null || !('statusCode' in response)) return;
    const answer = response as Response;
    answer.headers = { 'x-trace-id': context.traceId, ...answer.headers };
  };
  return {
    before: ({ event, context }) => {
      context.traceId = traceIdOf(options.trustClient ? event.headers?.['x-trace-id'] : undefined, event.requestContext?.requestId);
    },
    after: echo,
    onError: echo,
  };
}
