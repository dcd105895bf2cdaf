/**
 * The CORS policy of the service's two HTTP front doors, in one place: the HTTP API's
 * `corsPreflight` and the streaming function URLs' `cors` on AWS (`lib/constructs/chat-apis.ts`),
 * and the local gateway, which answers as those do (`lib/local/gateway/cors.ts`). Plain data, so
 * the local runtime reads it without loading CDK.
 *
 * The allow-list of origins is the deployment's (`corsAllowOrigins`, every origin by default), not a
 * project's: API Gateway answers preflights itself and ignores CORS headers a function returns, and
 * a preflight carries neither credentials nor body to tell a project by. Per-project rules are
 * enforced by the service on the request itself (the widget's allowed origins, guest tokens bound
 * to their origin: docs/api.md, "Embed widget").
 */

/** Every origin, as `corsAllowOrigins` has it by default. */
export const ANY_ORIGIN = '*';
export const DEFAULT_CORS_ALLOW_ORIGINS: readonly string[] = [ANY_ORIGIN];

/**
 * Request headers browsers may send cross-origin to the HTTP API: every header an HTTP API handler
 * reads (the credentials, the project of a web push subscription or VAPID key request, a signature
 * to verify, the trace id). A header missing here fails the browser's preflight.
 */
export const corsAllowHeaders = [
  'Authorization',
  'Content-Type',
  'X-Service-Api-Key',
  'X-Service-Operator-Key',
  'X-Service-Project-Id',
  'X-Service-Signature',
  'X-Webhook-Signature',
  'X-Trace-Id',
] as const;

/** Methods of the HTTP API's routes, and the preflight's own. */
export const corsAllowMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Request headers a browser may send cross-origin to a streaming route's function URL: the JWT
 * (EventSource cannot set headers, so it may come as `?token=` instead), the resume point and the
 * trace id, all read by `functions/edge/stream.ts`.
 */
export const streamCorsAllowHeaders = ['Authorization', 'Last-Event-ID', 'X-Trace-Id'] as const;

/** Answer headers a page may read: the trace id to quote, and how long to wait after a 429 (the SDK honours it). */
export const corsExposeHeaders = ['Retry-After', 'X-Trace-Id'] as const;

/** How long a browser may keep a preflight's answer (browsers cap it lower: Chromium at 2 hours). */
export const CORS_MAX_AGE_SECONDS = 86_400;

/** One front door's rules: the HTTP API's or a streaming route's function URL's. */
export interface CorsRules {
  readonly allowOrigins: readonly string[];
  readonly allowMethods: readonly string[];
  readonly allowHeaders: readonly string[];
}

export const httpApiCors = (allowOrigins: readonly string[]): CorsRules => ({
  allowOrigins,
  allowMethods: corsAllowMethods,
  allowHeaders: corsAllowHeaders,
});

export const streamCors = (allowOrigins: readonly string[], method: string): CorsRules => ({
  allowOrigins,
  allowMethods: [method],
  allowHeaders: streamCorsAllowHeaders,
});

/**
 * The `Access-Control-Allow-Origin` value for a request's `Origin`, as API Gateway and function URLs
 * choose it: `*` when every origin is allowed, the origin itself when it is listed, none otherwise
 * (and none without an `Origin`: such a request is no browser's cross-origin one).
 */
export function allowedOriginFor(rules: CorsRules, origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  if (rules.allowOrigins.includes(ANY_ORIGIN)) return ANY_ORIGIN;
  return rules.allowOrigins.includes(origin) ? origin : undefined;
}
