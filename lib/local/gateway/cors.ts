import type { IncomingMessage } from 'node:http';
import { allowedOriginFor, CORS_MAX_AGE_SECONDS, type CorsRules, corsExposeHeaders, httpApiCors, streamCors } from '../../cors';
import { matchHttpRoute } from './http-routing';

/**
 * CORS as the deployed front doors answer it, from the same policy (`lib/cors.ts`): the HTTP API's
 * rules, or a streaming route's function URL's for its path. Headers go only to a request with an
 * allowed `Origin`, and a function's own CORS headers are dropped, as API Gateway ignores them.
 */
export interface LocalCors {
  /** The headers every answer to this request carries (none without an allowed `Origin`). */
  answerHeaders(request: IncomingMessage, pathname: string): Record<string, string>;
  /** The preflight's headers: the answer headers and what may be sent (none for a disallowed origin). */
  preflightHeaders(request: IncomingMessage, pathname: string): Record<string, string>;
}

const originOf = (request: IncomingMessage) => request.headers.origin;

export function localCors(allowOrigins: readonly string[]): LocalCors {
  const rulesFor = (method: string, pathname: string): CorsRules => {
    const match = matchHttpRoute(method, pathname);
    return 'route' in match && match.route.transport === 'functionUrl'
      ? streamCors(allowOrigins, match.route.method)
      : httpApiCors(allowOrigins);
  };
  const answerHeaders = (rules: CorsRules, request: IncomingMessage): Record<string, string> => {
    const allowed = allowedOriginFor(rules, originOf(request));
    if (allowed === undefined) return {};
    return {
      'access-control-allow-origin': allowed,
      'access-control-expose-headers': corsExposeHeaders.join(',').toLowerCase(),
    };
  };
  return {
    answerHeaders: (request, pathname) => answerHeaders(rulesFor((request.method ?? 'GET').toUpperCase(), pathname), request),
    preflightHeaders(request, pathname) {
      const requested = request.headers['access-control-request-method'];
      if (typeof requested !== 'string') return {};
      const rules = rulesFor(requested.toUpperCase(), pathname);
      const headers = answerHeaders(rules, request);
      if (!headers['access-control-allow-origin']) return {};
      return {
        ...headers,
        'access-control-allow-methods': rules.allowMethods.join(','),
        'access-control-allow-headers': rules.allowHeaders.join(',').toLowerCase(),
        'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
      };
    },
  };
}

/** Drops the CORS headers a function set itself: API Gateway and function URLs with CORS settings ignore them. */
export function withoutCorsHeaders<T extends string | number | boolean | string[]>(headers: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !name.toLowerCase().startsWith('access-control-')));
}
