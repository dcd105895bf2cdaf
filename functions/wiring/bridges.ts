import type { Area } from './types.ts';

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
      summary: 'Remove a bridge; the room stops relaying and the platform webhook answers 404',
    },
  ],
};
