import { messageWriter } from './messages.ts';
import { MESSAGE_SK_PREFIX } from './table.ts';
import type { Area, QueueDefinition } from './types.ts';

/** Shared with the rooms and messages areas, which queue fan-out batches of large rooms. */
export const realtimeQueue: QueueDefinition = {
  id: 'Realtime',
  // Six times the worker's timeout, as AWS advises for SQS event sources.
  visibilityTimeoutSeconds: 180,
  maxReceiveCount: 3,
  summary: 'Realtime jobs: the welcome frames after a connect, and fan-out batches of large rooms',
};

/** WebSocket and SSE delivery, presence, server events, the user channel and the watchlist. */
export const realtime: Area = {
  id: 'Realtime',
  summary: 'WebSocket and SSE delivery, presence, server and user events, the watchlist',
  webSocketRoutes: [
    {
      routeKey: '$connect',
      id: 'WsConnect',
      handler: 'ws/connect.ts',
      // `webhook-key` opens the Pusher app's secret (sealed as bridge and webhook secrets are).
      bindings: ['table:read', 'table:write', 'queue:Realtime', 'secret:signing-key', 'secret:webhook-key'],
      summary:
        'Authenticate the token, check room membership (or user channel ownership), store the connection, queue the welcome frames; or open a Pusher-protocol socket (/app/<key>)',
    },
    {
      routeKey: '$disconnect',
      id: 'WsDisconnect',
      handler: 'ws/disconnect.ts',
      bindings: messageWriter,
      summary: 'Delete the connection; presence leave frames and room events',
    },
    {
      routeKey: '$default',
      id: 'WsDefault',
      handler: 'ws/default.ts',
      // A Pusher subscription's auth is checked against the app's secret, sealed under `webhook-key`.
      bindings: [...messageWriter, 'secret:webhook-key'],
      summary: 'Client frames, dispatched by type from the frame table; Pusher-protocol frames by their event',
    },
  ],
  frames: [
    // Keep-alives cost no invocation: API Gateway answers them (a MOCK route).
    { type: 'ping', channels: ['room', 'user'], answer: { type: 'pong' }, summary: 'Answered with pong by API Gateway' },
    {
      type: 'message',
      channels: ['room'],
      // The message rate limit is the pipeline's, shared by every way in (REST, socket, imports).
      summary: "A message to the socket's room through the message pipeline, answered by ack or error",
    },
    {
      type: 'client-*',
      channels: ['room'],
      rateLimit: { bucket: 'client-events', per: 'connection', setting: 'RATE_LIMIT_CLIENT_EVENTS_PER_SECOND', windowSeconds: 1 },
      summary: "Relayed to the room's other connections and offered to client_event webhooks",
    },
  ],
  httpRoutes: [
    {
      id: 'StreamRoom',
      method: 'GET',
      path: '/rooms/{roomId}/stream',
      handler: 'http/realtime/stream-room.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      transport: 'functionUrl',
      reservedConcurrency: 'streams',
      summary: 'Server-sent events of a room (token in Authorization or ?token=), resumable with Last-Event-ID',
    },
    {
      id: 'PublishEvents',
      method: 'POST',
      path: '/events',
      handler: 'http/realtime/publish-events.ts',
      auth: 'userOrService',
      minRole: 'member',
      rateLimit: { bucket: 'events', per: 'user', setting: 'RATE_LIMIT_MESSAGES_PER_MINUTE' },
      bindings: messageWriter,
      summary: 'Broadcast a server event to rooms the caller may post to, except one socket',
    },
    {
      id: 'PublishUserEvent',
      method: 'POST',
      path: '/users/{userId}/events',
      handler: 'http/realtime/publish-user-event.ts',
      auth: 'userOrService',
      bindings: messageWriter,
      summary: "Push a notification to a user's user channel (the user or an admin)",
    },
    {
      id: 'CloseUserConnections',
      method: 'DELETE',
      path: '/users/{userId}/connections',
      handler: 'http/realtime/close-user-connections.ts',
      auth: 'userOrService',
      bindings: messageWriter,
      summary: 'Close every room and user-channel connection of a user (the user or an admin)',
    },
    {
      id: 'ListWatchlist',
      method: 'GET',
      path: '/users/{userId}/watchlist',
      handler: 'http/realtime/list-watchlist.ts',
      auth: 'userOrService',
      bindings: ['table:read'],
      summary: "A user's watched rooms and users (the user or an admin)",
    },
    {
      id: 'AddWatchlistTarget',
      method: 'POST',
      path: '/users/{userId}/watchlist',
      handler: 'http/realtime/add-watchlist-target.ts',
      auth: 'userOrService',
      // A guest (an embed widget's visitor) may not follow the project's users coming and going.
      minRole: 'member',
      bindings: ['table:read', 'table:write'],
      summary: 'Watch a room or a user: activity reaches the user channel (members and above)',
    },
    {
      id: 'RemoveWatchlistTarget',
      method: 'DELETE',
      path: '/users/{userId}/watchlist',
      handler: 'http/realtime/remove-watchlist-target.ts',
      auth: 'userOrService',
      bindings: ['table:read', 'table:write'],
      summary: 'Stop watching a room or a user',
    },
  ],
  queues: [realtimeQueue],
  queueConsumers: [
    {
      id: 'RealtimeWorker',
      queue: 'Realtime',
      handler: 'workers/realtime.ts',
      batchSize: 10,
      // Welcome frames wait on nothing else, and large rooms fan out over several batches at once.
      maxConcurrency: 8,
      timeoutSeconds: 30,
      bindings: messageWriter,
      summary: 'Welcome frames of new connections and fan-out batches of large rooms',
    },
  ],
  eventSubscribers: [
    {
      id: 'WatcherNotifier',
      eventTypes: ['message.created'],
      // Only rooms someone has watched: a plain room's messages cost the notifier nothing.
      attributeFilter: { watched: ['true'] },
      handler: 'workers/notify-watchers.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write', 'connections:manage'],
      summary: "A new message in a watched room reaches the watchers' user channels",
    },
    {
      id: 'MessageUpdateBroadcaster',
      eventTypes: ['message.updated'],
      handler: 'workers/broadcast-message-updates.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write', 'queue:Realtime', 'connections:manage'],
      summary: "A stored message changed (edit, delete, reaction, pin, transcript): a message_updated frame to the room's sockets",
    },
    {
      id: 'RemovedMemberDisconnector',
      eventTypes: ['room.member_left'],
      handler: 'workers/disconnect-removed-members.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      // Closing the sockets announces the departures (presence frames, room events), as a disconnect does.
      bindings: ['table:read', 'table:write', 'queue:Realtime', 'connections:manage'],
      summary: 'A member removed from a room stops receiving it: their sockets to the room are closed',
    },
  ],
  streamConsumers: [
    {
      id: 'RoomDelivery',
      handler: 'workers/deliver-room-batches.ts',
      // A window's records in one invocation: at 1,000 a window is far past any room's rate.
      batchSize: 1000,
      // Only the messages the sender left to this consumer (docs/architecture.md, "Hot rooms: coalesced delivery").
      filters: [
        {
          eventName: ['INSERT'],
          dynamodb: { Keys: { sk: { S: [{ prefix: MESSAGE_SK_PREFIX }] } }, NewImage: { delivery: { S: ['coalesced'] } } },
        },
      ],
      timeoutSeconds: 30,
      batchWindow: { setting: 'REALTIME_COALESCE_WINDOW_MS', defaultMs: 180 },
      // Write: gone connections are forgotten, as after a broadcast; the queue: fan-out jobs of large rooms.
      bindings: ['table:read', 'table:write', 'queue:Realtime', 'connections:manage'],
      summary: 'Hot rooms: each stream poll window of messages as batch frames to opted-in sockets, single frames to the rest',
    },
  ],
};
