import type { Writable } from 'node:stream';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { openStreamSlot, type StreamSlot } from '#domain/realtime/stream-slots';
import { type AuthenticatedContext, authentication } from '#edge/middlewares/authentication';
import { type ErrorResponse, errorResponse } from '#edge/middlewares/error-response';
import { observability } from '#edge/middlewares/observability';
import { routeGuards } from '#edge/middlewares/route-guards';
import { type RouteMatchContext, routeMatch } from '#edge/middlewares/route-match';
import { type TraceIdContext, traceId } from '#edge/middlewares/trace-id';
import type { UserPrincipal } from '#shared/auth';
import { logger } from '#shared/logger';
import { inRequestContext } from '#shared/request-context';
import { httpRoute } from '#wiring';

export { matchRoutePath } from '#edge/middlewares/route-match';

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
  /** Taken from the path by the pipeline: a function URL event has no route and no path parameters. */
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

/** The stream the pipeline's handler writes to, handed in beside the Lambda context. */
interface ResponseStreamContext extends Context {
  responseStream: Writable;
}

type StreamContext = ResponseStreamContext & TraceIdContext & RouteMatchContext & AuthenticatedContext;

/** Errors before the stream opens are JSON, as elsewhere; the function URL adds no CORS header to them. */
const ERROR_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };

/**
 * A response-streaming route (a Lambda function URL in `RESPONSE_STREAM` mode on AWS; the local
 * gateway provides the same `awslambda` global), as a middy pipeline of `functions/edge/middlewares/`:
 * headers lower-cased, the trace id, the log context, the error answer (JSON until the stream
 * opens), the route's method and path, the user JWT from `Authorization` or `?token=` (EventSource
 * cannot set headers) and its role, the route's flag and rate limit. middy's own `streamifyResponse`
 * is not used: it pipes a body the handler returns, and rejects the invocation when the client
 * goes away mid-stream, where this handler writes as it goes and ends quietly.
 */
export function streamHandler(routeId: string, run: (request: StreamRequest) => Promise<void>) {
  const route = httpRoute(routeId);
  // A stream lives past any early timeout middy would set from the Lambda deadline; it ends itself.
  const pipeline = middy<APIGatewayProxyEventV2, ErrorResponse | undefined, Error, StreamContext>({ timeoutEarlyInMillis: 0 })
    .use(httpHeaderNormalizer())
    .use(traceId({ trustClient: true, echo: true }))
    .use(observability<APIGatewayProxyEventV2, StreamContext>(({ context }) => ({ traceId: context.traceId, route: route.id })))
    .use(errorResponse({ headers: ERROR_HEADERS }))
    .use(routeMatch(route))
    .use(authentication(route, { tokenInQuery: true }))
    .use(
      routeGuards<APIGatewayProxyEventV2, StreamContext>(route, ({ context: { principal } }) => ({
        projectId: principal?.projectId,
        userId: principal?.kind === 'user' ? principal.userId : undefined,
      })),
    )
    .handler(async (event, context) => {
      const { responseStream, principal, traceId } = context;
      if (principal?.kind !== 'user') throw new Error(`Route ${route.id} streams to users only`);
      const closed = new Promise<void>((resolve) => {
        responseStream.once('close', () => resolve());
        responseStream.once('finish', () => resolve());
        responseStream.once('error', () => resolve());
      });
      let opened: Writable | undefined;
      let slot: StreamSlot | undefined;
      try {
        await run({
          event,
          params: context.params,
          headers: event.headers ?? {},
          query: event.queryStringParameters ?? {},
          user: principal,
          traceId,
          closed,
          async open(extraHeaders) {
            slot = await openStreamSlot(principal.projectId, principal.userId);
            opened = awslambda.HttpResponseStream.from(responseStream, {
              statusCode: 200,
              // CORS headers come from the function URL's own CORS settings (the local gateway adds its own).
              headers: { 'x-trace-id': traceId, ...extraHeaders },
            });
            return opened;
          },
        });
      } catch (error) {
        // Before the stream opened, the error answer speaks; after, the status is already out.
        if (!opened) throw error;
        logger.error('stream failed after it opened', { error: error as Error });
      } finally {
        if (opened && !responseStream.writableEnded) responseStream.end();
        await slot?.release();
      }
      return undefined;
    });

  return awslambda.streamifyResponse(
    inRequestContext(async (event: APIGatewayProxyEventV2, responseStream: Writable, context: Context) => {
      const refused = await pipeline(event, Object.assign(context, { responseStream }) as StreamContext);
      if (refused) {
        const { statusCode, headers, body } = refused;
        awslambda.HttpResponseStream.from(responseStream, { statusCode, headers }).write(body);
      }
      if (!responseStream.writableEnded) responseStream.end();
    }),
  );
}
