/**
 * THE wiring table. Every HTTP route, WebSocket route and queue of the service is listed here once;
 * the CDK stacks (`lib/stacks/`) build API Gateway routes, one Lambda function per route and
 * least-privilege grants from it, and the local gateway (`lib/local/`) routes requests from it.
 * Handlers read their own auth requirements from here too (`functions/shared/http`), so a route's
 * auth cannot drift between the two worlds.
 *
 * Plain data only: this module is bundled into every function, so it must not import CDK or domain code.
 */

/** How a caller proves who it is. */
export type AuthKind =
  /** No credentials. */
  | 'none'
  /** `X-Service-Operator-Key` equal to `CHAT_OPERATOR_KEY`; the route answers 404 when that is unset. */
  | 'operator'
  /** `X-Service-Api-Key` of a project: a service principal with admin rights. */
  | 'apiKey'
  /** `Authorization: Bearer <JWT>` of a project user. */
  | 'user'
  /** A user JWT or a project API key (server routes). */
  | 'userOrService';

/** Project roles carried in the JWT `roles` claim, lowest first. `guest` sits below `member`. */
export const ROLES = ['guest', 'member', 'moderator', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/**
 * AWS resources a handler may touch. The CDK stack turns each into the narrowest grant
 * (`table:read` → `grantReadData`, `webhooks:start` → `states:StartExecution` on the retry state
 * machine, ...) and the matching environment variable.
 */
export type Access = 'table:read' | 'table:write' | 'events:send' | 'realtime:send' | 'connections:manage' | 'webhooks:start';

/**
 * Where an HTTP route is served on AWS. `httpApi` is the HTTP API; `functionUrl` is a Lambda
 * function URL in `RESPONSE_STREAM` mode, for routes that stream (SSE), which HTTP APIs cannot.
 * The local gateway serves both on one port.
 */
export type Transport = 'httpApi' | 'functionUrl';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRoute {
  /** Stable id; also the Lambda function's logical name. */
  readonly id: string;
  readonly method: HttpMethod;
  /** API Gateway path syntax: `/rooms/{roomId}`. */
  readonly path: string;
  /** Handler module, relative to `functions/`; it exports `handler`. */
  readonly handler: string;
  readonly auth: AuthKind;
  /** Lowest JWT role admitted. A service principal (API key) passes every role check. @default 'guest' */
  readonly minRole?: Role;
  readonly access: readonly Access[];
  /** @default 'httpApi' */
  readonly transport?: Transport;
  readonly summary: string;
}

export interface WebSocketRoute {
  readonly routeKey: '$connect' | '$disconnect' | '$default';
  readonly id: string;
  readonly handler: string;
  readonly access: readonly Access[];
  readonly summary: string;
}

/** A Lambda consumer of one queue (an SQS event source on AWS, a polling loop locally). */
export interface QueueConsumer {
  readonly id: string;
  /** `id` of the queue in `queues`. */
  readonly queue: string;
  readonly handler: string;
  readonly batchSize: number;
  /** Concurrent batches (the event source's maximum concurrency on AWS, at least 2; pollers locally). */
  readonly maxConcurrency: number;
  /** Seconds; the queue's visibility timeout must exceed it. */
  readonly timeoutSeconds: number;
  readonly access: readonly Access[];
  readonly summary: string;
}

/** A Lambda function a state machine invokes: its ARN replaces `${placeholder}` in the ASL file. */
export interface StateMachineTask {
  readonly placeholder: string;
  readonly id: string;
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly access: readonly Access[];
  readonly summary: string;
}

/** A Step Functions Standard state machine whose ASL lives in `lib/state-machines/`. */
export interface StateMachineDefinition {
  readonly id: string;
  /** Relative to the repository root; CDK and the local interpreter load this same file. */
  readonly definitionFile: string;
  readonly tasks: readonly StateMachineTask[];
  readonly summary: string;
}

export interface QueueDefinition {
  readonly id: string;
  /** Seconds a received message stays invisible; must exceed the consumer's timeout. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives after which a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly summary: string;
}

const readWrite: readonly Access[] = ['table:read', 'table:write'];
/** Writes messages or realtime frames: the table, domain events, room fan-out (maybe queued) and posts to connections. */
const messageWriter: readonly Access[] = ['table:read', 'table:write', 'events:send', 'realtime:send', 'connections:manage'];

export const httpRoutes: readonly HttpRoute[] = [
  {
    id: 'GetHealth',
    method: 'GET',
    path: '/health',
    handler: 'http/health/get-health.ts',
    auth: 'none',
    access: ['table:read', 'events:send'],
    summary: 'State of the service and its dependencies',
  },
  {
    id: 'CreateProject',
    method: 'POST',
    path: '/platform/projects',
    handler: 'http/platform/create-project.ts',
    auth: 'operator',
    access: readWrite,
    summary: 'Create a project (tenant); returns its API key and signing secret once',
  },
  {
    id: 'RotateProjectKeys',
    method: 'POST',
    path: '/platform/projects/{projectId}/rotate-keys',
    handler: 'http/platform/rotate-project-keys.ts',
    auth: 'operator',
    access: readWrite,
    summary: 'Replace a project API key and/or JWT signing secret',
  },
  {
    id: 'CreateToken',
    method: 'POST',
    path: '/auth/token',
    handler: 'http/auth/create-token.ts',
    auth: 'apiKey',
    access: ['table:read'],
    summary: 'Mint a user JWT for the API key project',
  },
  {
    id: 'SignIn',
    method: 'POST',
    path: '/auth/signin',
    handler: 'http/auth/sign-in.ts',
    auth: 'none',
    access: ['table:read'],
    summary: 'Exchange user credentials for a session JWT',
  },
  {
    id: 'SetUserCredentials',
    method: 'PUT',
    path: '/users/{userId}/credentials',
    handler: 'http/auth/set-user-credentials.ts',
    auth: 'apiKey',
    access: readWrite,
    summary: 'Set a user password and roles for sign-in',
  },
  {
    id: 'CreateRoom',
    method: 'POST',
    path: '/rooms',
    handler: 'http/rooms/create-room.ts',
    auth: 'userOrService',
    minRole: 'member',
    access: readWrite,
    summary: 'Create a public, group or dm room',
  },
  {
    id: 'ListRooms',
    method: 'GET',
    path: '/rooms',
    handler: 'http/rooms/list-rooms.ts',
    auth: 'user',
    access: ['table:read'],
    summary: "The caller's rooms (or the project's public rooms)",
  },
  {
    id: 'GetRoom',
    method: 'GET',
    path: '/rooms/{roomId}',
    handler: 'http/rooms/get-room.ts',
    auth: 'userOrService',
    access: ['table:read'],
    summary: 'One room',
  },
  {
    id: 'UpdateRoom',
    method: 'PATCH',
    path: '/rooms/{roomId}',
    handler: 'http/rooms/update-room.ts',
    auth: 'userOrService',
    access: readWrite,
    summary: 'Change room fields (room owner or project admin)',
  },
  {
    id: 'ListRoomMembers',
    method: 'GET',
    path: '/rooms/{roomId}/members',
    handler: 'http/rooms/list-members.ts',
    auth: 'userOrService',
    access: ['table:read'],
    summary: 'Members of a room',
  },
  {
    id: 'AddRoomMember',
    method: 'POST',
    path: '/rooms/{roomId}/members',
    handler: 'http/rooms/add-member.ts',
    auth: 'userOrService',
    access: readWrite,
    summary: 'Add or promote a member (room owner, moderator or admin)',
  },
  {
    id: 'RemoveRoomMember',
    method: 'DELETE',
    path: '/rooms/{roomId}/members/{userId}',
    handler: 'http/rooms/remove-member.ts',
    auth: 'userOrService',
    access: messageWriter,
    summary: "Remove a member (self, room owner, moderator or admin) and close the member's sockets to the room",
  },
  {
    id: 'GetRoomE2eKey',
    method: 'GET',
    path: '/rooms/{roomId}/e2e-key',
    handler: 'http/rooms/get-e2e-key.ts',
    auth: 'user',
    access: ['table:read'],
    summary: 'The room end-to-end key (members, not guests)',
  },
  {
    id: 'CreateMessage',
    method: 'POST',
    path: '/messages',
    handler: 'http/messages/create-message.ts',
    auth: 'user',
    access: messageWriter,
    summary: 'Send a message to a room',
  },
  {
    id: 'ListRoomMessages',
    method: 'GET',
    path: '/rooms/{roomId}/messages',
    handler: 'http/messages/list-messages.ts',
    auth: 'userOrService',
    access: readWrite,
    summary: 'Message history with before/after cursors',
  },
  {
    id: 'PostRoomMessage',
    method: 'POST',
    path: '/rooms/{roomId}/messages',
    handler: 'http/messages/post-room-message.ts',
    auth: 'userOrService',
    access: messageWriter,
    summary: 'Send a message; admins may set userId and createdAt',
  },
  {
    id: 'ImportMessage',
    method: 'POST',
    path: '/admin/messages/import',
    handler: 'http/messages/import-message.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: messageWriter,
    summary: 'Import one message, idempotent on clientMessageId',
  },
  {
    id: 'ImportMessageBatch',
    method: 'POST',
    path: '/admin/messages/import/batch',
    handler: 'http/messages/import-message-batch.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: messageWriter,
    summary: 'Import up to 100 messages',
  },
  {
    id: 'GetBlockList',
    method: 'GET',
    path: '/admin/moderation/blocklist',
    handler: 'http/moderation/get-block-list.ts',
    auth: 'userOrService',
    minRole: 'moderator',
    access: ['table:read'],
    summary: "The project's moderation block list",
  },
  {
    id: 'ReplaceBlockList',
    method: 'PUT',
    path: '/admin/moderation/blocklist',
    handler: 'http/moderation/replace-block-list.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: readWrite,
    summary: 'Replace the block list',
  },
  {
    id: 'ListModerationFlags',
    method: 'GET',
    path: '/admin/moderation/flags',
    handler: 'http/moderation/list-flags.ts',
    auth: 'userOrService',
    minRole: 'moderator',
    access: ['table:read'],
    summary: 'Moderation records written by automatic flags, newest first',
  },
  {
    id: 'ListWebhookEventTypes',
    method: 'GET',
    path: '/webhooks/event-types',
    handler: 'http/webhooks/list-event-types.ts',
    auth: 'none',
    access: [],
    summary: 'The catalogue of event types webhooks may subscribe to',
  },
  {
    id: 'RegisterWebhook',
    method: 'POST',
    path: '/webhooks/register',
    handler: 'http/webhooks/register-webhook.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: readWrite,
    summary: 'Register a webhook; the signing secret is shown once',
  },
  {
    id: 'ListWebhooks',
    method: 'GET',
    path: '/webhooks',
    handler: 'http/webhooks/list-webhooks.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: ['table:read'],
    summary: "The project's webhook registrations, without secrets",
  },
  {
    id: 'DeleteWebhook',
    method: 'DELETE',
    path: '/webhooks/{webhookId}',
    handler: 'http/webhooks/delete-webhook.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: readWrite,
    summary: 'Delete a webhook registration',
  },
  {
    id: 'VerifyWebhook',
    method: 'POST',
    path: '/webhooks/verify',
    handler: 'http/webhooks/verify-webhook.ts',
    auth: 'none',
    access: readWrite,
    summary: "Check a body and signature against a registered webhook's secret (rate limited per IP)",
  },
  {
    id: 'VerifyWebhookSignatures',
    method: 'POST',
    path: '/webhooks/verify-batch',
    handler: 'http/webhooks/verify-signature-batch.ts',
    auth: 'none',
    access: readWrite,
    summary: 'Check a single or batch signature for a given secret (rate limited per IP)',
  },
  {
    id: 'ListWebhookDeliveries',
    method: 'GET',
    path: '/admin/webhooks/deliveries',
    handler: 'http/webhooks/list-deliveries.ts',
    auth: 'userOrService',
    minRole: 'moderator',
    access: ['table:read'],
    summary: 'Webhook deliveries, newest first',
  },
  {
    id: 'ReplayWebhookDelivery',
    method: 'POST',
    path: '/admin/webhooks/deliveries/{deliveryId}/replay',
    handler: 'http/webhooks/replay-delivery.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: [...readWrite, 'webhooks:start'],
    summary: 'Put a failed delivery back to pending and run its attempts again',
  },
  {
    id: 'StreamRoom',
    method: 'GET',
    path: '/rooms/{roomId}/stream',
    handler: 'http/realtime/stream-room.ts',
    auth: 'user',
    access: readWrite,
    transport: 'functionUrl',
    summary: 'Server-sent events of a room (token in Authorization or ?token=), resumable with Last-Event-ID',
  },
  {
    id: 'PublishEvents',
    method: 'POST',
    path: '/events',
    handler: 'http/realtime/publish-events.ts',
    auth: 'userOrService',
    minRole: 'member',
    access: messageWriter,
    summary: 'Broadcast a server event to rooms the caller may post to, except one socket',
  },
  {
    id: 'PublishUserEvent',
    method: 'POST',
    path: '/users/{userId}/events',
    handler: 'http/realtime/publish-user-event.ts',
    auth: 'userOrService',
    access: messageWriter,
    summary: "Push a notification to a user's user channel (the user or an admin)",
  },
  {
    id: 'CloseUserConnections',
    method: 'DELETE',
    path: '/users/{userId}/connections',
    handler: 'http/realtime/close-user-connections.ts',
    auth: 'userOrService',
    access: messageWriter,
    summary: 'Close every room and user-channel connection of a user (the user or an admin)',
  },
  {
    id: 'ListWatchlist',
    method: 'GET',
    path: '/users/{userId}/watchlist',
    handler: 'http/realtime/list-watchlist.ts',
    auth: 'userOrService',
    access: ['table:read'],
    summary: "A user's watched rooms and users (the user or an admin)",
  },
  {
    id: 'AddWatchlistTarget',
    method: 'POST',
    path: '/users/{userId}/watchlist',
    handler: 'http/realtime/add-watchlist-target.ts',
    auth: 'userOrService',
    access: readWrite,
    summary: 'Watch a room or a user: activity reaches the user channel',
  },
  {
    id: 'RemoveWatchlistTarget',
    method: 'DELETE',
    path: '/users/{userId}/watchlist',
    handler: 'http/realtime/remove-watchlist-target.ts',
    auth: 'userOrService',
    access: readWrite,
    summary: 'Stop watching a room or a user',
  },
  {
    id: 'GetFeatureFlags',
    method: 'GET',
    path: '/client/feature-flags',
    handler: 'http/flags/get-feature-flags.ts',
    auth: 'none',
    access: ['table:read'],
    summary: "Client feature flags; a bearer token targets its project's overrides",
  },
  {
    id: 'GetProjectFeatureFlags',
    method: 'GET',
    path: '/admin/feature-flags',
    handler: 'http/flags/get-project-feature-flags.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: ['table:read'],
    summary: "The project's feature flag overrides",
  },
  {
    id: 'SetProjectFeatureFlags',
    method: 'PUT',
    path: '/admin/feature-flags',
    handler: 'http/flags/set-project-feature-flags.ts',
    auth: 'userOrService',
    minRole: 'admin',
    access: readWrite,
    summary: "Replace the project's feature flag overrides",
  },
];

export const webSocketRoutes: readonly WebSocketRoute[] = [
  {
    routeKey: '$connect',
    id: 'WsConnect',
    handler: 'ws/connect.ts',
    access: [...readWrite, 'realtime:send'],
    summary: 'Authenticate the token, check room membership (or user channel ownership), store the connection, queue the welcome frames',
  },
  {
    routeKey: '$disconnect',
    id: 'WsDisconnect',
    handler: 'ws/disconnect.ts',
    access: messageWriter,
    summary: 'Delete the connection; presence leave frames and room events',
  },
  {
    routeKey: '$default',
    id: 'WsDefault',
    handler: 'ws/default.ts',
    access: messageWriter,
    summary: 'Client frames: `message` through the message pipeline, `client-*` events, `ping`',
  },
];

export const queues: readonly QueueDefinition[] = [
  {
    id: 'Events',
    // Six times the consumer's timeout, as AWS advises for SQS event sources.
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    summary: 'Domain events (message.created, mention, moderation.auto_flag, ...) for webhooks, push and summaries',
  },
  {
    id: 'Realtime',
    // Six times the worker's timeout.
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 3,
    summary: 'Realtime jobs: the welcome frames after a connect, and fan-out batches of large rooms',
  },
];

export const queueConsumers: readonly QueueConsumer[] = [
  {
    id: 'EventsDispatcher',
    queue: 'Events',
    handler: 'workers/dispatch-events.ts',
    batchSize: 10,
    maxConcurrency: 2,
    timeoutSeconds: 60,
    access: [...readWrite, 'webhooks:start', 'connections:manage'],
    summary:
      'Deliver each domain event to its webhooks (first attempt at once, the rest through the retry state machine) and to watchers of its room',
  },
  {
    id: 'RealtimeWorker',
    queue: 'Realtime',
    handler: 'workers/realtime.ts',
    batchSize: 10,
    // Welcome frames wait on nothing else, and large rooms fan out over several batches at once.
    maxConcurrency: 8,
    timeoutSeconds: 30,
    access: messageWriter,
    summary: 'Welcome frames of new connections and fan-out batches of large rooms',
  },
];

export const stateMachines: readonly StateMachineDefinition[] = [
  {
    id: 'WebhookRetry',
    definitionFile: 'lib/state-machines/webhook-retry.asl.json',
    tasks: [
      {
        placeholder: 'AttemptFunctionArn',
        id: 'WebhookAttempt',
        handler: 'workers/webhook-attempt.ts',
        timeoutSeconds: 30,
        access: readWrite,
        summary: 'One attempt of one webhook delivery',
      },
    ],
    summary: 'Webhook retry schedule: wait until next_attempt_at, attempt, repeat while pending',
  },
];

/** The route whose id is given; throws at cold start for a typo rather than at request time. */
export function httpRoute(id: string): HttpRoute {
  const route = httpRoutes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`No HTTP route with id ${id} in lib/routes.ts`);
  return route;
}
