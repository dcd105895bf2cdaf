import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { httpRoute } from '#wiring';
import { httpApiEvent } from '../../lib/local/gateway/http-event';
import { lambdaContext } from '../../lib/local/handlers';

type HttpLambda = (event: ReturnType<typeof httpApiEvent>, context: ReturnType<typeof lambdaContext>) => Promise<unknown>;

/**
 * A route's handler, imported into the test process, called as the HTTP API calls its function: the
 * event the local gateway builds for a JSON request to the route's path from `socketAddress`. The
 * test then sees this process's module state (the DynamoDB client's middleware, the metric sinks).
 */
export async function invokeRoute(
  handler: HttpLambda,
  routeId: string,
  request: { readonly headers: Record<string, string>; readonly body: unknown; readonly socketAddress?: string },
) {
  const route = httpRoute(routeId);
  const incoming = {
    headers: { 'content-type': 'application/json', ...request.headers },
    httpVersion: '1.1',
    socket: { remoteAddress: request.socketAddress ?? '127.0.0.1' },
  } as unknown as IncomingMessage;
  const event = httpApiEvent({
    request: incoming,
    url: new URL(route.path, 'http://127.0.0.1'),
    method: route.method,
    route,
    pathParameters: {},
    body: Buffer.from(JSON.stringify(request.body)),
    domainName: '127.0.0.1',
  });
  const answer = (await handler(event, lambdaContext(route.id))) as APIGatewayProxyStructuredResultV2;
  return { status: answer.statusCode, body: answer.body ? JSON.parse(answer.body) : undefined };
}
