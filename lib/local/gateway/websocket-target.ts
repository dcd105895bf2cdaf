import type { ErrorBody } from '#shared/error-codes';
import { queryRecord } from './http-event';
import { decodePathParameters } from './http-routing';

/**
 * The `$connect` query: the URL's own, plus the channel its path names (`/ws/rooms/<roomId>`,
 * `/ws/user/<userId>`); or the refusal for a path no WebSocket route serves. The CloudFront
 * Function in front of the WebSocket API on AWS (lib/edge-functions/websocket-viewer-request.js)
 * maps every path the same way; test/unit/edge-functions.test.ts holds the two side by side.
 */
export function connectQuery(url: URL): { query: Record<string, string> } | { status: number; error: ErrorBody } {
  const channel = /^\/ws\/(rooms|user)\/([^/]+)$/.exec(url.pathname);
  if (!channel && url.pathname !== '/ws') {
    return { status: 404, error: { code: 'not_found', message: `No WebSocket route for ${url.pathname}` } };
  }
  const query = queryRecord(url) ?? {};
  if (channel) {
    const decoded = decodePathParameters(['kind', 'id'], channel);
    if (!decoded) return { status: 400, error: { code: 'invalid_path', message: 'The path has a malformed percent-encoding' } };
    // The path alone names the channel: a user path with `?roomId=` must not open that room.
    delete query.roomId;
    delete query.userId;
    query[channel[1] === 'rooms' ? 'roomId' : 'userId'] = decoded.id as string;
  }
  return { query };
}
