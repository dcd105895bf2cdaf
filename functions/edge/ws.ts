import middy from '@middy/core';
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { errorResponse } from '#edge/middlewares/error-response';
import { observability } from '#edge/middlewares/observability';
import { originGuard, type SourceIpContext } from '#edge/middlewares/origin-guard';
import { type TraceIdContext, traceId } from '#edge/middlewares/trace-id';
import { inRequestContext } from '#shared/request-context';
import { behindOriginHeader, type WebSocketRoute, webSocketRoutes } from '#wiring';

/** API Gateway's `$connect` event also carries the handshake's query string and headers. */
export type WebSocketEvent = APIGatewayProxyWebsocketEventV2 & {
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
};

/**
 * Wraps a WebSocket route handler in the middy pipeline of `functions/edge/middlewares/`: the trace
 * id (the gateway's request id: a WebSocket answer has no header to echo it in), the log context
 * (connection and route), the error answer, and CloudFront's origin header (`$connect` only: the
 * others run for connections it let in). On `$connect` a non-2xx status refuses the upgrade,
 * which is how a bad token, a non-member or a handshake around CloudFront is turned away. Frames on `$default` go on to
 * `frameRouter` (`#edge/frames`), whose own steps guard and answer each frame.
 */
export function wsHandler(
  routeKey: WebSocketRoute['routeKey'],
  run: (event: WebSocketEvent, context: SourceIpContext) => Promise<APIGatewayProxyResultV2>,
) {
  const route = webSocketRoutes.find((candidate) => candidate.routeKey === routeKey);
  if (!route) throw new Error(`No WebSocket route ${routeKey} in functions/wiring/`);
  const pipeline = middy<WebSocketEvent, APIGatewayProxyResultV2, Error, TraceIdContext & SourceIpContext>()
    .use(traceId({ trustClient: false, echo: false }))
    .use(
      observability<WebSocketEvent, TraceIdContext & SourceIpContext>(({ event, context }) => ({
        traceId: context.traceId,
        connectionId: event.requestContext.connectionId,
        route: routeKey,
      })),
    )
    .use(errorResponse())
    .use(originGuard<WebSocketEvent>({ behindOriginHeader: behindOriginHeader(route), socketAddress: socketAddressOf }))
    .handler((event, context) => run(event, context));
  // Lambda invokes it with its plain context; the steps above fill in the fields they add.
  return inRequestContext(pipeline as unknown as (event: WebSocketEvent, context: Context) => Promise<APIGatewayProxyResultV2>);
}

/** API Gateway's WebSocket events carry the caller's address in `identity`, not in `http` as HTTP APIs do. */
const socketAddressOf = (event: WebSocketEvent) =>
  (event.requestContext as { identity?: { sourceIp?: string } }).identity?.sourceIp ?? 'unknown';
