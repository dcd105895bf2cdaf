import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { auditTrail } from '#edge/middlewares/audit';
import { type AuthenticatedContext, type AuthenticationOptions, authentication } from '#edge/middlewares/authentication';
import { errorResponse } from '#edge/middlewares/error-response';
import { readJsonBody } from '#edge/middlewares/json-body';
import { observability } from '#edge/middlewares/observability';
import { originGuard, type SourceIpContext } from '#edge/middlewares/origin-guard';
import { requestFigures } from '#edge/middlewares/request-figures';
import { routeGuards } from '#edge/middlewares/route-guards';
import { type TraceIdContext, traceId } from '#edge/middlewares/trace-id';
import { parsePart, type Schemas, type ValidatedContext, validation } from '#edge/middlewares/validation';
import { declareRouteSchemas } from '#edge/route-schemas';
import type { Principal, UserPrincipal } from '#shared/auth';
import { inRequestContext } from '#shared/request-context';
import type * as z from '#shared/schema';
import { behindOriginHeader, httpRoute } from '#wiring';

export { MAX_BODY_BYTES } from '#edge/middlewares/json-body';
export { parsePart };

/**
 * A JSON body its route left raw (`rawBody: true`) so that a signature could be checked on the bytes
 * as sent, read and validated now as a `body` schema is: 413 over `MAX_BODY_BYTES`, 400
 * `invalid_json`, or 400 naming each bad field.
 */
export function parseRawJson<S extends z.ZodMiniType>(schema: S, rawBody: Buffer): z.infer<S> {
  return parsePart(schema, readJsonBody({ body: rawBody.toString('utf8'), isBase64Encoded: false }), 'body');
}

export interface HttpRequest<Body, Query, Params> {
  readonly body: Body;
  readonly query: Query;
  readonly params: Params;
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body's bytes as the client sent them (API Gateway base64-encodes binary ones), for routes whose schemas say `rawBody`. */
  readonly rawBody: Buffer;
  /** The caller's address: the socket's, or behind CloudFront the viewer's (`originGuard`). */
  readonly sourceIp: string;
  readonly traceId: string;
  /** The authenticated caller; throws on routes with `auth: 'none' | 'operator'`. */
  readonly caller: Principal;
  /** The caller as a user; throws when a service principal reached a user-only route. */
  readonly user: UserPrincipal;
}

export interface HttpResult {
  readonly status: number;
  readonly body?: unknown;
  /** A body sent as written (already JSON text), in place of `body` serialized. */
  readonly text?: string;
  readonly headers?: Record<string, string>;
}

/** What a handler adds to `httpHandler` for its route's needs (`operatorAuth` of `#edge/operator-auth`). */
export type HttpHandlerOptions = Pick<AuthenticationOptions, 'operatorKey'>;

const JSON_HEADERS = { 'content-type': 'application/json' };

const socketAddressOf = (event: APIGatewayProxyEventV2) => event.requestContext?.http?.sourceIp ?? 'unknown';

/**
 * Builds a route's Lambda handler as a middy pipeline, each step a middleware of
 * `functions/edge/middlewares/`: headers lower-cased, the trace id (echoed in `x-trace-id`), the
 * log context, the error answer, CloudFront's origin header and the caller's address, then the auth and lowest role, the feature flag and rate limit its
 * wiring-table entry names, and zod validation of path, query and body; `run` gets what they found.
 * Handlers stay a schema and one domain call.
 */
export function httpHandler<
  B extends z.ZodMiniType = z.ZodMiniUndefined,
  Q extends z.ZodMiniType = z.ZodMiniUndefined,
  P extends z.ZodMiniType = z.ZodMiniUndefined,
>(
  routeId: string,
  schemas: Schemas<B, Q, P>,
  run: (request: HttpRequest<z.infer<B>, z.infer<Q>, z.infer<P>>) => Promise<HttpResult>,
  options: HttpHandlerOptions = {},
) {
  const route = httpRoute(routeId);
  declareRouteSchemas(routeId, schemas);
  type HttpContext = TraceIdContext & SourceIpContext & AuthenticatedContext & ValidatedContext<z.infer<B>, z.infer<Q>, z.infer<P>>;

  const pipeline = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, HttpContext>()
    .use(httpHeaderNormalizer())
    .use(traceId({ trustClient: true, echo: true }))
    .use(observability<APIGatewayProxyEventV2, HttpContext>(({ context }) => ({ traceId: context.traceId, route: route.id })))
    .use(requestFigures(route.id))
    .use(errorResponse({ headers: JSON_HEADERS }))
    .use(originGuard({ behindOriginHeader: behindOriginHeader(route), socketAddress: socketAddressOf }))
    .use(authentication(route, options))
    .use(
      routeGuards<APIGatewayProxyEventV2, HttpContext>(route, ({ event, context: { principal, sourceIp } }) => ({
        projectId: principal?.projectId,
        userId: principal?.kind === 'user' ? principal.userId : undefined,
        sourceIp,
        path: event.rawPath,
      })),
    )
    .use(auditTrail<APIGatewayProxyEventV2, HttpContext>(route))
    .use(validation(schemas))
    .handler(async (event, context) => {
      const { input, principal } = context;
      const result = await run({
        ...input,
        headers: event.headers ?? {},
        rawBody: Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8'),
        sourceIp: context.sourceIp,
        traceId: context.traceId,
        get caller(): Principal {
          if (!principal) throw new Error(`Route ${route.id} has no authenticated caller`);
          return principal;
        },
        get user(): UserPrincipal {
          if (principal?.kind !== 'user') throw new Error(`Route ${route.id} needs a user caller`);
          return principal;
        },
      });
      return {
        statusCode: result.status,
        headers: { ...JSON_HEADERS, ...result.headers },
        body: result.text ?? (result.body === undefined ? '' : JSON.stringify(result.body)),
      };
    });
  // Lambda invokes it with its plain context; the steps above fill in the fields they add.
  return inRequestContext(
    pipeline as unknown as (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>,
  );
}

export const ok = (body: unknown, headers?: Record<string, string>): HttpResult => ({ status: 200, body, headers });
export const created = (body: unknown): HttpResult => ({ status: 201, body });
export const noContent = (): HttpResult => ({ status: 204 });
/** JSON text the client saves as a file named `filename` (`Content-Disposition: attachment`). */
export const jsonAttachment = (text: string, filename: string): HttpResult => ({
  status: 200,
  text,
  headers: { 'content-disposition': `attachment; filename="${filename}"`, 'cache-control': 'no-store' },
});
