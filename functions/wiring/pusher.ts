import { messageWriter } from './messages.ts';
import type { Area, RateLimit } from './types.ts';

/**
 * Pusher's server libraries call the trigger API with no credential of ours, only the app's
 * signature: the limit counts what the routes refuse (unknown app ids per address; bad signatures
 * and malformed requests per address and app), never a correctly signed event, which costs no
 * write for it (`RATE_LIMIT_PUSHER_API_REFUSALS_PER_IP_PER_MINUTE`).
 */
const triggerLimit: RateLimit = {
  bucket: 'pusher-api',
  per: 'ip',
  counts: 'refusals',
  setting: 'RATE_LIMIT_PUSHER_API_REFUSALS_PER_IP_PER_MINUTE',
};
/** They publish as `POST /events` does, and open the app's secret under `webhook-key` to check the signature. */
const triggerBindings = [...messageWriter, 'secret:webhook-key'] as const;

/**
 * Pusher compatibility, the HTTP side: the project's Pusher app (id, key and a sealed secret),
 * the channel auth endpoint pusher-js and Laravel Echo call, and the trigger API of the Pusher
 * server libraries. The WebSocket side (`/app/<key>`) is the realtime area's.
 */
export const pusher: Area = {
  id: 'Pusher',
  summary:
    "Pusher compatibility over HTTP: the project's Pusher app, channel auths for pusher-js and Laravel Echo, and the signed trigger API",
  httpRoutes: [
    {
      id: 'PutPusherApp',
      method: 'POST',
      path: '/admin/pusher-app',
      handler: 'http/pusher/put-pusher-app.ts',
      auth: 'userOrService',
      minRole: 'admin',
      // The secret is sealed under `webhook-key`, as bridge secrets are.
      bindings: ['table:read', 'table:write', 'secret:webhook-key'],
      audit: { action: 'pusher.app_rotate', target: ['response.appId'] },
      summary: "Create the project's Pusher app, or rotate its key and secret (the app id stays); the secret is answered only here",
    },
    {
      id: 'GetPusherApp',
      method: 'GET',
      path: '/admin/pusher-app',
      handler: 'http/pusher/get-pusher-app.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The project's Pusher app id and key, without the secret",
    },
    {
      id: 'AuthorizeChannel',
      method: 'POST',
      path: '/auth/channel',
      handler: 'http/pusher/authorize-channel.ts',
      auth: 'user',
      minRole: 'member',
      rateLimit: { bucket: 'channel-auth', per: 'user', setting: 'RATE_LIMIT_CHANNEL_AUTH_PER_MINUTE' },
      // A public room's channel joins the caller, as a native socket does; the secret signs the auth.
      bindings: ['table:read', 'table:write', 'secret:webhook-key'],
      summary: "A Pusher subscription's auth (and channel_data) for a room channel the caller is a member of; form-encoded or JSON",
    },
    {
      id: 'PusherTriggerEvents',
      method: 'POST',
      path: '/apps/{appId}/events',
      handler: 'http/pusher/trigger-events.ts',
      auth: 'none',
      rateLimit: triggerLimit,
      bindings: triggerBindings,
      summary: "Pusher's trigger API (signed with the app's secret): one event to up to 100 room channels",
    },
    {
      id: 'PusherTriggerBatchEvents',
      method: 'POST',
      path: '/apps/{appId}/batch_events',
      handler: 'http/pusher/trigger-batch-events.ts',
      auth: 'none',
      rateLimit: triggerLimit,
      bindings: triggerBindings,
      summary: "Pusher's batch trigger API (signed with the app's secret): up to 10 events, each to one room channel",
    },
  ],
};
