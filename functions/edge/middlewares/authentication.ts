import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import {
  authenticateApiKey,
  authenticateToken,
  bearerToken,
  constantTimeEqual,
  looksLikeApiKey,
  type Principal,
  requireRole,
} from '#shared/auth';
import { NotFoundError, UnauthorizedError } from '#shared/errors';
import type { HttpRoute } from '#wiring';

/** What the `authentication` middleware puts on the context: the caller, none on `auth: 'none' | 'operator'` routes. */
export interface AuthenticatedContext extends Context {
  principal?: Principal;
}

interface CredentialEvent {
  /** Lower-cased by the header normalizer before this step. */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>>;
}

export interface AuthenticationOptions {
  /**
   * Reads the operator key, for routes with `auth: 'operator'` (`operatorAuth` of
   * `#edge/operator-auth`): given by those handlers only, so only their bundles carry the
   * Secrets Manager client.
   */
  readonly operatorKey?: () => Promise<string | undefined>;
  /** The user JWT may come as `?token=` too: EventSource cannot set headers. */
  readonly tokenInQuery?: boolean;
}

async function authenticate(route: HttpRoute, event: CredentialEvent, options: AuthenticationOptions): Promise<Principal | undefined> {
  const headers = event.headers ?? {};
  switch (route.auth) {
    case 'none':
      return undefined;
    case 'operator': {
      if (!options.operatorKey) throw new Error(`Route ${route.id} has auth "operator": build it with operatorAuth (#edge/operator-auth)`);
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
      if (!apiKey) {
        const message = looksLikeApiKey(bearerToken(headers.authorization) ?? '')
          ? 'The API key goes in the X-Service-Api-Key header, not in Authorization: Bearer'
          : 'The X-Service-Api-Key header is required';
        throw new UnauthorizedError('missing_credentials', message);
      }
      return authenticateApiKey(apiKey);
    }
    case 'user':
    case 'userOrService': {
      const apiKey = headers['x-service-api-key'];
      if (apiKey && route.auth === 'userOrService') return authenticateApiKey(apiKey);
      const token = bearerToken(headers.authorization) ?? (options.tokenInQuery ? event.queryStringParameters?.token : undefined);
      if (!token) {
        const accepted =
          route.auth === 'userOrService'
            ? 'Authorization: Bearer <JWT> or X-Service-Api-Key'
            : options.tokenInQuery
              ? 'Authorization: Bearer <JWT> or ?token='
              : 'Authorization: Bearer <JWT>';
        throw new UnauthorizedError('missing_credentials', `${accepted} is required`);
      }
      return authenticateToken(token, headers.origin);
    }
  }
}

/**
 * Authenticates the caller the way the route's wiring-table entry says (`auth`: none, operator key,
 * API key, user JWT, or either) and checks its lowest role (`minRole`), putting the caller on
 * `context.principal`: 401 without valid credentials, 403 below the role.
 */
export function authentication(
  route: HttpRoute,
  options: AuthenticationOptions = {},
): MiddlewareObj<CredentialEvent, unknown, Error, AuthenticatedContext> {
  if (route.auth === 'operator' && !options.operatorKey) throw new Error(`Route ${route.id} needs operatorAuth (#edge/operator-auth)`);
  return {
    before: async ({ event, context }) => {
      const principal = await authenticate(route, event, options);
      // On the context before the role check, so that a 403 is audited as the caller's (`auditTrail`).
      context.principal = principal;
      if (principal && route.minRole) requireRole(principal, route.minRole);
    },
  };
}
