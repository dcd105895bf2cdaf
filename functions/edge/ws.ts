import middy from '@middy/core';
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { errorResponse } from '#edge/middlewares/error-response';
import { observability } from '#edge/middlewares/observability';
import { type TraceIdContext, traceId } from '#edge/middlewares/trace-id';

/** API Gateway's `$connect` event also carries the handshake's query string and headers. */
export type WebSocketEvent = APIGatewayProxyWebsocketEventV2 & {
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
};

/**
 * Wraps a WebSocket route handler in the middy pipeline of `functions/edge/middlewares/`: the trace
 * id (the gateway's request id: a WebSocket answer has no header to echo it in), the log context
 * (connection and route), and the error answer. On `$connect` a non-2xx status refuses the upgrade,
 * which is how a bad token or a non-member is turned away. Frames on `$default` go on to
 * `frameRouter` (`#edge/frames`), whose own steps guard and answer each frame.
 */
export function wsHandler(routeKey: string, run: (event: WebSocketEvent) => Promise<APIGatewayProxyResultV2>) {
  const pipeline = middy<WebSocketEvent, APIGatewayProxyResultV2, Error, TraceIdContext>()
    .use(traceId({ trustClient: false, echo: false }))
    .use(
      observability<WebSocketEvent, TraceIdContext>(({ event, context }) => ({
        traceId: context.traceId,
        connectionId: event.requestContext.connectionId,
        route: routeKey,
      })),
    )
    .use(errorResponse())
    .handler((event) => run(event));
  // Lambda invokes it with its plain context; the steps above fill in the fields they add.
  return pipeline as unknown as (event: WebSocketEvent, context: Context) => Promise<APIGatewayProxyResultV2>;
}
