import middy from '@middy/core';
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2 } from 'aws-lambda';
import { errorAnswer } from '#shared/errors';
import { logger } from '#shared/logger';

/** API Gateway's `$connect` event also carries the handshake's query string and headers. */
export type WebSocketEvent = APIGatewayProxyWebsocketEventV2 & {
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
};

/**
 * Wraps a WebSocket route handler: trace logging and error mapping. On `$connect` a non-2xx status
 * refuses the upgrade, which is how a bad token or a non-member is turned away.
 */
export function wsHandler(routeKey: string, run: (event: WebSocketEvent) => Promise<APIGatewayProxyResultV2>) {
  return middy<WebSocketEvent, APIGatewayProxyResultV2>().handler(async (event) => {
    logger.appendKeys({ connectionId: event.requestContext.connectionId, route: routeKey });
    try {
      return await run(event);
    } catch (error) {
      const answer = errorAnswer(error, event.requestContext.requestId);
      return { statusCode: answer.status, headers: answer.headers, body: JSON.stringify(answer.body) };
    } finally {
      logger.removeKeys(['connectionId', 'route']);
    }
  });
}
