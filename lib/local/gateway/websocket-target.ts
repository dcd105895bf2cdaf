import type { ErrorBody } from '#shared/error-codes';
import { queryRecord } from './http-event';
import { decodePathParameters } from './http-routing';

/**
 * The `$connect` query: the URL's own, plus the channel its path names (`/ws/rooms/<roomId>`,
 * `/ws/user/<userId>`, or `/app/<key>`, the Pusher protocol's endpoint); or the refusal for a path
 * no WebSocket route serves. The CloudFront Function in front of the WebSocket API on AWS
 * (lib/edge-functions/websocket-viewer-request.js) maps every path the same way;
 * test/unit/edge-functions.test.ts holds the two side by side.
 */
export function connectQuery(url: URL): { query: Record<string, string> } | { status: number; error: ErrorBody } {
  const channel = /^\/ws\/(rooms|user)\/([^/]+)$/.exec(url.pathname);
  const app = channel ? null : /^\/app\/([^/]+)$/.exec(url.pathname);
  if (!channel && !app && url.pathname !== '/ws') {
    return { status: 404, error: { code: 'not_found', message: `No WebSocket route for ${url.pathname}` } };
  }
  const query = queryRecord(url) ?? {};
  const named = channel ?? app;
  if (named) {
    const decoded = decodePathParameters(['id'], /([^/]+)$/.exec(url.pathname) as RegExpExecArray);
    if (!decoded) return { status: 400, error: { code: 'invalid_path', message: 'The path has a malformed percent-encoding' } };
    // The path alone names the channel: a user path with `?roomId=` must not open that room.
    for (const name of CHANNEL_KEYS) delete query[name];
    query[channel ? (channel[1] === 'rooms' ? 'roomId' : 'userId') : 'pusherKey'] = decoded.id as string;
  }
  return { query };
}

/** The query names that choose a connection's channel; only the path may set them. */
const CHANNEL_KEYS = ['roomId', 'userId', 'pusherKey'] as const;
