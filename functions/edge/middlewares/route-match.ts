import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { NotFoundError } from '#shared/errors';
import type { HttpRoute } from '#wiring';

/** What the `routeMatch` middleware puts on the context: the route's `{name}` segments of the path. */
export interface RouteMatchContext extends Context {
  params: Record<string, string>;
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
 * For a route served by a function URL, which has no routes of its own: 404 unless the method and
 * path are the route's, whose path parameters go on `context.params` (the event has none).
 */
export function routeMatch(route: HttpRoute): MiddlewareObj<APIGatewayProxyEventV2, unknown, Error, RouteMatchContext> {
  return {
    before: ({ event, context }) => {
      const method = event.requestContext?.http?.method ?? 'GET';
      const params = matchRoutePath(route.path, event.rawPath ?? '/');
      if (!params || method !== route.method) throw new NotFoundError('not_found', `No route for ${method} ${event.rawPath}`);
      context.params = params;
    },
  };
}
