// CloudFront Function (runtime cloudfront-js-2.0), viewer request of the `/ws/*` behaviour.
//
// API Gateway WebSocket APIs have no path routing: a client connects to the stage's URL and names
// its channel in the query. This rewrites the service's paths (`/ws/rooms/<roomId>`,
// `/ws/user/<userId>`, `/app/<key>`) into that form exactly as the local gateway reads them
// (lib/local/gateway/websocket-target.ts, `connectQuery`) and refuses what it refuses with the same
// status and error body; test/unit/edge-functions.test.ts runs the two over one table of paths.
// lib/edge-functions/index.ts puts the stage name in place of the placeholder at synth.
// The shapes relied on are the CloudFront Developer Guide's ("CloudFront Functions event structure";
// "Restrictions on all edge functions", URI and query string encoding): the URI and the query's
// names and values arrive as the viewer encoded them, and a query the function writes goes to the
// origin as written, so it must stay percent-encoded.

const STAGE_PATH = '/__WEBSOCKET_STAGE__';

// biome-ignore lint/correctness/noUnusedVariables: CloudFront calls the function named `handler`.
function handler(event) {
  const request = event.request;
  // Replaces whatever the client sent under that name; the handlers trust it only behind x-origin-verify.
  request.headers['x-chat-viewer-address'] = { value: event.viewer.ip };
  const path = urlPathname(request.uri);
  const channel = /^\/ws\/(rooms|user)\/([^/]+)$/.exec(path);
  // `/app/<key>`: the Pusher protocol's endpoint (pusher-js and Laravel Echo connect there).
  const app = channel ? null : /^\/app\/([^/]+)$/.exec(path);
  if (!channel && !app && path !== '/ws') return refusal(404, 'Not Found', 'not_found', `No WebSocket route for ${path}`);
  if (channel || app) {
    const key = channel ? (channel[1] === 'rooms' ? 'roomId' : 'userId') : 'pusherKey';
    let id;
    try {
      id = encodeURIComponent(decodeURIComponent(channel ? channel[2] : app[1]));
    } catch (_malformed) {
      return refusal(400, 'Bad Request', 'invalid_path', 'The path has a malformed percent-encoding');
    }
    // The path names the channel, never the query: every spelling of a channel key the API
    // would decode goes (CloudFront hands names and values over as the viewer encoded them), so a
    // user path cannot open a room, nor a room path a user channel or a Pusher app.
    Object.keys(request.querystring).forEach((name) => {
      const decoded = decodedQueryName(name);
      if (decoded === 'roomId' || decoded === 'userId' || decoded === 'pusherKey') delete request.querystring[name];
    });
    request.querystring[key] = { value: id };
  }
  request.uri = STAGE_PATH;
  return request;
}

// The path as the URL standard reads it (what `new URL()` gives the local gateway): `\` is `/`,
// `.` and `..` segments (also spelled `%2e`) are resolved, and the characters it escapes are escaped.
// CloudFront passes the URI over as the viewer sent it, so `/ws/rooms/x/../../user/u` must not pass
// for a room id, and must still reach the channel the local gateway would open.
function urlPathname(uri) {
  const segments = uri.replace(/\\/g, '/').split('/');
  const kept = [];
  for (let index = 1; index < segments.length; index++) {
    const segment = segments[index].toLowerCase();
    const last = index === segments.length - 1;
    if (segment === '..' || segment === '.%2e' || segment === '%2e.' || segment === '%2e%2e') {
      kept.pop();
      if (last) kept.push('');
    } else if (segment === '.' || segment === '%2e') {
      if (last) kept.push('');
    } else {
      kept.push(segments[index]);
    }
  }
  // Whatever is not printable ASCII is escaped in runs, not character by character: CloudFront's
  // runtime keeps strings as UTF-8, where a character is not a pair of UTF-16 halves as in V8.
  return `/${kept.join('/')}`
    .replace(/[^!-~]+/g, (run) => encodeURIComponent(run))
    .replace(/["<>`{}]/g, (character) => encodeURIComponent(character));
}

// A query name as API Gateway and `URLSearchParams` decode it, as far as an ASCII key can tell.
function decodedQueryName(name) {
  return name.replace(/\+/g, ' ').replace(/%([0-7][0-9a-fA-F])/g, (_escape, hex) => String.fromCharCode(parseInt(hex, 16)));
}

function refusal(statusCode, statusDescription, code, message) {
  return {
    statusCode: statusCode,
    statusDescription: statusDescription,
    headers: { 'content-type': { value: 'application/json' } },
    body: JSON.stringify({ error: { code: code, message: message } }),
  };
}
