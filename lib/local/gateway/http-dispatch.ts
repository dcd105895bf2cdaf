import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import type { ErrorBody } from '#shared/error-codes';
import type { HttpRoute } from '#wiring';
import type { HandlerHost } from '../handlers';
import { LocalResponseStream } from '../streaming';
import { httpApiEvent } from './http-event';
import { MAX_PAYLOAD_BYTES, readBody, sendJson, writeLambdaResult } from './http-replies';
import { decodePathParameters, matchHttpRoute } from './http-routing';

/**
 * Routes a request from the wiring table to its handler module and writes its answer; the refusals
 * API Gateway makes itself (no route, wrong method, body too large, a malformed escape in the
 * path) never reach a handler.
 */
export async function dispatchHttpRoute(
  request: IncomingMessage,
  response: ServerResponse,
  target: { readonly url: URL; readonly method: string; readonly domainName: string },
  handlers: HandlerHost,
): Promise<void> {
  const { url, method } = target;
  const match = matchHttpRoute(method, url.pathname);
  if ('missing' in match) {
    return sendJson(response, match.missing, {
      error: {
        code: match.missing === 405 ? 'method_not_allowed' : 'not_found',
        message: `No route for ${method} ${url.pathname}`,
      } satisfies ErrorBody,
    });
  }
  const body = await readBody(request);
  if (body === 'too_large') {
    return sendJson(response, 413, {
      error: { code: 'payload_too_large', message: `Request bodies are limited to ${MAX_PAYLOAD_BYTES} bytes` } satisfies ErrorBody,
    });
  }
  const pathParameters = decodePathParameters(match.paramNames, match.values);
  if (!pathParameters) {
    return sendJson(response, 400, {
      error: { code: 'invalid_path', message: 'The path has a malformed percent-encoding' } satisfies ErrorBody,
    });
  }
  const event = httpApiEvent({ request, url, method, route: match.route, pathParameters, body, domainName: target.domainName });
  if (match.route.transport === 'functionUrl') return streamRoute(handlers, match.route, event, response);
  const result = (await handlers.invoke(match.route.handler, match.route.id, event)) as APIGatewayProxyResultV2;
  writeLambdaResult(response, result);
}

/** A function URL in RESPONSE_STREAM mode on AWS (the SSE stream): the handler writes the body as it goes. */
async function streamRoute(
  handlers: HandlerHost,
  route: HttpRoute,
  event: APIGatewayProxyEventV2,
  response: ServerResponse,
): Promise<void> {
  const stream = new LocalResponseStream(response);
  await handlers.invokeStreaming(route.handler, route.id, event, stream);
  if (!stream.writableEnded) stream.end();
}
