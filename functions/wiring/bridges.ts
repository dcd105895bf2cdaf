import { messageWriter } from './messages.ts';
import type { Area, RateLimit } from './types.ts';

/**
 * The platforms call with no credential of ours, and each calls for every tenant from a few
 * addresses: the limit counts what the webhooks refuse (unknown bridges per address; bad signatures
 * and malformed requests per address and bridge), never a platform's genuine events, which cost no write for it
 * (`RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE`; the sender limit holds each platform user).
 */
const inboundLimit: RateLimit = {
  bucket: 'bridge-inbound',
  per: 'ip',
  counts: 'refusals',
  setting: 'RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE',
};
/**
 * They post through the message pipeline; Slack's signing secret and Matrix's hs_token open under
 * `webhook-key` (Discord verifies with the application's public key, which is no secret).
 */
const inboundBindings = [...messageWriter, 'secret:webhook-key'] as const;

/** Bridges: a room linked to a Slack, Discord or Matrix channel, both ways. */
export const bridges: Area = {
  id: 'Bridges',
  summary: 'Bridges to Slack, Discord and Matrix: their records, the platforms’ verified webhooks, and the relay of room messages out',
  httpRoutes: [
    {
      id: 'CreateBridge',
      method: 'POST',
      path: '/admin/bridges',
      handler: 'http/bridges/create-bridge.ts',
      auth: 'userOrService',
      minRole: 'admin',
      // Secrets are sealed under `webhook-key`, as webhook secrets are.
      bindings: ['table:read', 'table:write', 'secret:webhook-key'],
      audit: { action: 'bridges.create', target: ['response.id', 'body.platform', 'body.roomId'] },
      summary: 'Link a room to a Slack, Discord or Matrix channel; its secrets are sealed and never answered',
    },
    {
      id: 'ListBridges',
      method: 'GET',
      path: '/admin/bridges',
      handler: 'http/bridges/list-bridges.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The project's bridges, without secrets",
    },
    {
      id: 'GetBridge',
      method: 'GET',
      path: '/admin/bridges/{bridgeId}',
      handler: 'http/bridges/get-bridge.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: 'One bridge, without secrets',
    },
    {
      id: 'UpdateBridge',
      method: 'PATCH',
      path: '/admin/bridges/{bridgeId}',
      handler: 'http/bridges/update-bridge.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write', 'secret:webhook-key'],
      audit: { action: 'bridges.update' },
      summary: "Change a bridge's settings or replace its secrets (its platform and room stay)",
    },
    {
      id: 'DeleteBridge',
      method: 'DELETE',
      path: '/admin/bridges/{bridgeId}',
      handler: 'http/bridges/delete-bridge.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      audit: { action: 'bridges.delete' },
      summary: 'Remove a bridge; the room stops relaying and the platform webhook answers 404',
    },
    {
      id: 'SlackBridgeEvents',
      method: 'POST',
      path: '/webhooks/bridge/slack/{bridgeId}',
      handler: 'http/bridges/slack-events.ts',
      auth: 'none',
      rateLimit: inboundLimit,
      bindings: inboundBindings,
      summary: "Slack's Events API (signed with the app's signing secret): url_verification, and channel messages posted to the room",
    },
    {
      id: 'DiscordBridgeInteractions',
      method: 'POST',
      path: '/webhooks/bridge/discord/{bridgeId}',
      handler: 'http/bridges/discord-interactions.ts',
      auth: 'none',
      rateLimit: inboundLimit,
      bindings: messageWriter,
      summary: "Discord's interactions (Ed25519-signed): PING, and /chat commands and modals posted to the room",
    },
    {
      id: 'MatrixBridgeTransaction',
      method: 'POST',
      path: '/webhooks/matrix/{bridgeId}',
      handler: 'http/bridges/matrix-transaction.ts',
      auth: 'none',
      rateLimit: inboundLimit,
      bindings: inboundBindings,
      summary:
        "A Matrix application service transaction (the homeserver's hs_token): text messages of the linked Matrix room posted to the room",
    },
    {
      id: 'MatrixBridgeTransactionPut',
      method: 'PUT',
      path: '/webhooks/matrix/{bridgeId}/_matrix/app/v1/transactions/{txnId}',
      handler: 'http/bridges/matrix-transaction-put.ts',
      auth: 'none',
      rateLimit: inboundLimit,
      bindings: inboundBindings,
      summary: 'The same transaction on the path a homeserver calls (registration url <base>/webhooks/matrix/<bridgeId>)',
    },
  ],
  eventSubscribers: [
    {
      id: 'BridgeRelay',
      eventTypes: ['message.created'],
      // Only bridged rooms' messages reach the queue: a room without a bridge costs the relay nothing.
      attributeFilter: { bridged: ['true'] },
      handler: 'workers/relay-to-bridges.ts',
      // A batch's events are relayed in parallel, each to its room's few bridges; ten keep the
      // invocations few when a bridged room is busy without one slow platform holding more back.
      batchSize: 10,
      // Slack (about one post a second per channel) and Discord (five per two seconds per webhook)
      // throttle well below what more pollers could send: more would only buy 429s and retries.
      maxConcurrency: 2,
      // Each platform call ends within OUTBOUND_TIMEOUT_MS (10 s), the bridges of an event in
      // parallel; 30 s leaves room for the secrets, the claims and a slow Matrix homeserver.
      timeoutSeconds: 30,
      // Six times the consumer's timeout, as AWS advises for SQS event sources; it is also the wait
      // before a failed platform is tried again, longer than the Retry-After Slack and Discord send.
      visibilityTimeoutSeconds: 180,
      // Five tries over about a quarter of an hour ride out a platform's brief outage; then the
      // event rests in the dead-letter queue (the bridges that took it are not sent it again).
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write', 'secret:webhook-key', 'outbound:slack', 'outbound:discord'],
      summary: "A bridged room's new message goes to each of its bridges' channels but the one it came from, once per bridge",
    },
  ],
};
