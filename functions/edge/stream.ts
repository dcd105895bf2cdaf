import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { openStreamSlot, type StreamSlot } from '#domain/realtime/stream-slots';
import { authenticateToken, bearerToken, requireRole, type UserPrincipal } from '#shared/auth';
import { errorAnswer, NotFoundError, UnauthorizedError } from '#shared/errors';
import { logger } from '#shared/logger';
import { traceIdOf } from '#shared/trace-id';
import { httpRoute } from '#wiring';

/** What Lambda's Node.js runtime provides to response-streaming functions (`awslambda` global). */
interface AwsLambdaGlobal {
  streamifyResponse(
    handler: (event: APIGatewayProxyEventV2, responseStream: Writable, context: Context) => Promise<void>,
  ): (event: APIGatewayProxyEventV2, responseStream: Writable, context: Context) => Promise<void>;
  HttpResponseStream: { from(stream: Writable, prelude: { statusCode: number; headers?: Record<string, string> }): Writable };
}
declare const awslambda: AwsLambdaGlobal;

export interface StreamRequest {
  readonly event: APIGatewayProxyEventV2;
  /** Taken from the path by this wrapper: a function URL event has no route and no path parameters. */
  readonly params: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly user: UserPrincipal;
  readonly traceId: string;
  /**
   * Takes one of the caller's stream slots (429 `too_many_streams` when the user or the project has
   * none left) and opens the response with status 200 and these headers; everything written after
   * is the body. The slot is given back when the handler returns.
   */
  open(headers: Record<string, string>): Promise<Writable>;
  /** Resolves when the client went away (or the stream ended), so loops can stop. */
  readonly closed: Promise<void>;
}

function lowerCase(record: Record<string, string | undefined> | undefined): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(record ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
}

/**
 * The route's `{name}` segments read from the raw path, or `undefined` when the path is not the
 * route's. A function URL answers every path and method, so the handler must check both itself.
 */
export function matchRoutePath(template: string, rawPath: string): Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = template
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (!param?.[1]) return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(param[1]);
      return '([^/]+)';
    })
    .join('/');
  const values = new RegExp(`^${pattern}/?$`).exec(rawPath);
  if (!values) return undefined;
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index + 1] ?? '')]));
  } catch {
    return undefined;
  }
}

/**
 * A response-streaming route (a Lambda function URL in `RESPONSE_STREAM` mode on AWS; the local
 * gateway provides the same `awslambda` global). Auth is the user JWT from `Authorization` or
 * `?token=`, since EventSource cannot set headers. Errors before `open` are JSON, as elsewhere.
 */
export function streamHandler(routeId: string, run: (request: StreamRequest) => Promise<void>) {
  const route = httpRoute(routeId);
  return awslambda.streamifyResponse(async (event, responseStream) => {
    const headers = lowerCase(event.headers);
    const query = event.queryStringParameters ?? {};
    const traceId = traceIdOf(headers['x-trace-id'], event.requestContext?.requestId);
    let opened: Writable | undefined;
    let slot: StreamSlot | undefined;
    const closed = new Promise<void>((resolve) => {
      responseStream.once('close', () => resolve());
      responseStream.once('finish', () => resolve());
      responseStream.once('error', () => resolve());
    });
    try {
      const method = event.requestContext?.http?.method ?? 'GET';
      const params = matchRoutePath(route.path, event.rawPath ?? '/');
      if (!params || method !== route.method) throw new NotFoundError('not_found', `No route for ${method} ${event.rawPath}`);
      const token = bearerToken(headers.authorization) ?? query.token;
      if (!token) throw new UnauthorizedError('missing_credentials', 'Authorization: Bearer <JWT> or ?token= is required');
      const user = await authenticateToken(token);
      if (route.minRole) requireRole(user, route.minRole);
      await run({
        event,
        params,
        headers,
        query,
        user,
        traceId,
        closed,
        async open(extraHeaders) {
          slot = await openStreamSlot(user.projectId, user.userId);
          opened = awslambda.HttpResponseStream.from(responseStream, {
            statusCode: 200,
            // CORS headers come from the function URL's own CORS settings (the local gateway adds its own).
            headers: { 'x-trace-id': traceId, ...extraHeaders },
          });
          return opened;
        },
      });
    } catch (error) {
      if (opened) {
        logger.error('stream failed after it opened', { error: error as Error });
      } else {
        const answer = errorAnswer(error, traceId);
        const stream = awslambda.HttpResponseStream.from(responseStream, {
          statusCode: answer.status,
          headers: { 'content-type': 'application/json', 'x-trace-id': traceId, 'access-control-allow-origin': '*', ...answer.headers },
        });
        stream.write(JSON.stringify(answer.body));
      }
    } finally {
      if (!responseStream.writableEnded) responseStream.end();
      await slot?.release();
    }
  });
}
