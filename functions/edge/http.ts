import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { enforceRouteGuards } from '#domain/guards/route-guards';
import {
  authenticateApiKey,
  authenticateToken,
  bearerToken,
  constantTimeEqual,
  type Principal,
  requireRole,
  type UserPrincipal,
} from '#shared/auth';
import { BadRequestError, errorAnswer, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '#shared/errors';
import { logger } from '#shared/logger';
import type * as z from '#shared/schema';
import { traceIdOf } from '#shared/trace-id';
import { type HttpRoute, httpRoute } from '#wiring';

/** Largest JSON body accepted; batch imports of 100 rows of 4,000 characters fit. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface HttpRequest<Body, Query, Params> {
  readonly body: Body;
  readonly query: Query;
  readonly params: Params;
  readonly headers: Readonly<Record<string, string | undefined>>;
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
  readonly headers?: Record<string, string>;
}

interface Schemas<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> {
  readonly body?: B;
  readonly query?: Q;
  readonly params?: P;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'content-type': 'application/json', ...headers },
  body: body === undefined ? '' : JSON.stringify(body),
});

type Issue = z.core.$ZodIssue;

/**
 * One entry per offending field. For a union (a body of one shape or another) the shape the input
 * came closest to, the one with strictly the fewest issues, speaks, so the details still name
 * fields; when no shape is closest (none or both given) the union itself is the issue.
 */
function fieldIssues(issues: readonly Issue[], prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      const fewest = Math.min(...issue.errors.map((branch) => branch.length));
      const closest = issue.errors.filter((branch) => branch.length === fewest);
      if (closest.length === 1 && closest[0]) return fieldIssues(closest[0], path);
    }
    return [{ path, message: issue.message }];
  });
}

function issuesOf(error: z.core.$ZodError, where: string) {
  return fieldIssues(error.issues, []).map((issue) => ({ field: [where, ...issue.path.map(String)].join('.'), message: issue.message }));
}

/** Validates one part of a request (`body`, `query`, `path`, ...): a 400 naming each bad field otherwise. Also for handlers outside `httpHandler`. */
export function parsePart<S extends z.ZodMiniType>(schema: S | undefined, value: unknown, where: string): z.infer<S> {
  if (!schema) return undefined as z.infer<S>;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = issuesOf(parsed.error, where);
  throw new BadRequestError(`Invalid request: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

function readJsonBody(event: APIGatewayProxyEventV2): unknown {
  if (!event.body) return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new PayloadTooLargeError(`The body exceeds ${MAX_BODY_BYTES} bytes`);
  try {
    return JSON.parse(raw);
  } catch {
    throw new BadRequestError('The body is not valid JSON', undefined, 'invalid_json');
  }
}

function lowerCaseHeaders(headers: APIGatewayProxyEventV2['headers']): Record<string, string | undefined> {
  const lower: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) lower[name.toLowerCase()] = value;
  return lower;
}

/** What a handler adds to `httpHandler` for its route's needs. */
export interface HttpHandlerOptions {
  /**
   * Reads the operator key, for routes with `auth: 'operator'` (`operatorAuth` of
   * `#shared/operator-auth`): given by those handlers only, so only their bundles carry the
   * Secrets Manager client.
   */
  readonly operatorKey?: () => Promise<string | undefined>;
}

async function authenticate(
  route: HttpRoute,
  headers: Record<string, string | undefined>,
  options: HttpHandlerOptions,
): Promise<Principal | undefined> {
  switch (route.auth) {
    case 'none':
      return undefined;
    case 'operator': {
      if (!options.operatorKey)
        throw new Error(`Route ${route.id} has auth "operator": build it with operatorAuth (#shared/operator-auth)`);
      const operatorKey = await options.operatorKey();
      // Without an operator key the platform routes do not exist, rather than being guessable.
      if (!operatorKey) throw new NotFoundError('not_found', 'No such route');
      const given = headers['x-service-operator-key'];
      if (!given || !constantTimeEqual(given, operatorKey)) {
        throw new UnauthorizedError('missing_credentials', 'A valid X-Service-Operator-Key header is required');
      }
      return undefined;
    }
    case 'apiKey': {
      const apiKey = headers['x-service-api-key'];
      if (!apiKey) throw new UnauthorizedError('missing_credentials', 'The X-Service-Api-Key header is required');
      return authenticateApiKey(apiKey);
    }
    case 'user':
    case 'userOrService': {
      const apiKey = headers['x-service-api-key'];
      if (apiKey && route.auth === 'userOrService') return authenticateApiKey(apiKey);
      const token = bearerToken(headers.authorization);
      if (!token) {
        const accepted = route.auth === 'user' ? 'Authorization: Bearer <JWT>' : 'Authorization: Bearer <JWT> or X-Service-Api-Key';
        throw new UnauthorizedError('missing_credentials', `${accepted} is required`);
      }
      return authenticateToken(token);
    }
  }
}

/**
 * Builds a route's Lambda handler: trace-id logging, error mapping, the auth, lowest role, feature
 * flag and rate limit its wiring-table entry names, zod validation of body/query/path, then `run`.
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
  if (route.auth === 'operator' && !options.operatorKey) throw new Error(`Route ${route.id} needs operatorAuth (#shared/operator-auth)`);

  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>().handler(async (event) => {
    const headers = lowerCaseHeaders(event.headers);
    const traceId = traceIdOf(headers['x-trace-id'], event.requestContext?.requestId);
    logger.appendKeys({ traceId, route: route.id });
    const traceHeader = { 'x-trace-id': traceId };
    try {
      const principal = await authenticate(route, headers, options);
      if (principal && route.minRole) requireRole(principal, route.minRole);
      const sourceIp = event.requestContext?.http?.sourceIp ?? 'unknown';
      await enforceRouteGuards(route, {
        projectId: principal?.projectId,
        userId: principal?.kind === 'user' ? principal.userId : undefined,
        sourceIp,
      });
      const request: HttpRequest<z.infer<B>, z.infer<Q>, z.infer<P>> = {
        params: parsePart(schemas.params, event.pathParameters ?? {}, 'path'),
        query: parsePart(schemas.query, event.queryStringParameters ?? {}, 'query'),
        body: parsePart(schemas.body, readJsonBody(event), 'body'),
        headers,
        sourceIp,
        traceId,
        get caller(): Principal {
          if (!principal) throw new Error(`Route ${route.id} has no authenticated caller`);
          return principal;
        },
        get user(): UserPrincipal {
          if (principal?.kind !== 'user') throw new Error(`Route ${route.id} needs a user caller`);
          return principal;
        },
      };
      const result = await run(request);
      return json(result.status, result.body, { ...traceHeader, ...result.headers });
    } catch (error) {
      const answer = errorAnswer(error, traceId);
      return json(answer.status, answer.body, { ...traceHeader, ...answer.headers });
    } finally {
      logger.removeKeys(['traceId', 'route']);
    }
  });
}

export const ok = (body: unknown, headers?: Record<string, string>): HttpResult => ({ status: 200, body, headers });
export const created = (body: unknown): HttpResult => ({ status: 201, body });
export const noContent = (): HttpResult => ({ status: 204 });
