import type { Binding } from './bindings.ts';
import type { Area, QueueDefinition, RateLimit } from './types.ts';

/**
 * Every provider a sender may call, and the keys it opens (project provider keys are sealed under
 * `webhook-key`, the VAPID private key under `signing-key`).
 */
const sender: readonly Binding[] = [
  'table:read',
  'table:write',
  'secret:webhook-key',
  'secret:signing-key',
  'secret:fcm-legacy-key',
  'outbound:fcm',
  'outbound:google-oauth',
  'outbound:apns',
  'outbound:apns-sandbox',
];

export const pushQueue: QueueDefinition = {
  id: 'PushSend',
  // Six times the sender's timeout, as AWS advises for SQS event sources.
  visibilityTimeoutSeconds: 360,
  maxReceiveCount: 3,
  summary: 'Batches of push deliveries of large rooms',
};

/** Devices and browsers register again on every app start or page load: one budget for both routes. */
const pushRegistrationLimit: RateLimit = { bucket: 'push-registration', per: 'user', setting: 'RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE' };

/** Mobile (FCM, APNs) and browser (VAPID Web Push) notifications of new messages. */
export const push: Area = {
  id: 'Push',
  summary: 'Push devices, web push subscriptions, push configuration, sending after messages, delivery acknowledgements',
  httpRoutes: [
    {
      id: 'RegisterPushDevice',
      method: 'POST',
      path: '/push/devices',
      handler: 'http/push/register-device.ts',
      auth: 'user',
      rateLimit: pushRegistrationLimit,
      bindings: ['table:read', 'table:write'],
      summary: "Register the caller's device token (fcm, android, apns, ios); the same token again updates it",
    },
    {
      id: 'ListPushDevices',
      method: 'GET',
      path: '/push/devices',
      handler: 'http/push/list-devices.ts',
      auth: 'user',
      bindings: ['table:read'],
      summary: "The caller's devices",
    },
    {
      id: 'DeletePushDevice',
      method: 'DELETE',
      path: '/push/devices/{deviceId}',
      handler: 'http/push/delete-device.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: "Remove one of the caller's devices",
    },
    {
      id: 'PutPushConfig',
      method: 'PUT',
      path: '/push/config',
      handler: 'http/push/put-config.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write', 'secret:webhook-key'],
      audit: { action: 'push.config_set' },
      summary: 'Set the push configuration of one environment; keys are stored sealed',
    },
    {
      id: 'GetPushConfig',
      method: 'GET',
      path: '/push/config',
      handler: 'http/push/get-config.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: 'The push configurations with hasFcm and hasApns, never a key',
    },
    {
      id: 'GetVapidPublicKey',
      method: 'GET',
      path: '/push/web/vapid-public-key',
      handler: 'http/push/get-vapid-public-key.ts',
      auth: 'none',
      // Opening the pair (on first use: making it) needs both keys: older pairs were sealed under `webhook-key`.
      bindings: ['table:read', 'table:write', 'secret:webhook-key', 'secret:signing-key'],
      summary: "The project's VAPID public key (generated on first use), for PushManager.subscribe",
    },
    {
      id: 'SubscribeWebPush',
      method: 'POST',
      path: '/push/web/subscribe',
      handler: 'http/push/subscribe.ts',
      auth: 'user',
      rateLimit: pushRegistrationLimit,
      bindings: ['table:read', 'table:write'],
      summary: "Store the caller's browser push subscription (https endpoint, SSRF-guarded)",
    },
    {
      id: 'UnsubscribeWebPush',
      method: 'DELETE',
      path: '/push/web/subscribe/{idOrEndpoint}',
      handler: 'http/push/unsubscribe.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: "Remove one of the caller's subscriptions, by id or by endpoint",
    },
    {
      id: 'ListWebPushSubscriptions',
      method: 'GET',
      path: '/push/web/subscriptions',
      handler: 'http/push/list-subscriptions.ts',
      auth: 'user',
      bindings: ['table:read'],
      summary: "The caller's subscriptions: endpoint masked, endpointHost, failureCount, lastSentAt",
    },
    {
      id: 'AcknowledgePushDelivery',
      method: 'POST',
      path: '/push/delivery-ack',
      handler: 'http/push/acknowledge-delivery.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: 'The client confirms it received a push, by the push id in its payload',
    },
  ],
  queues: [pushQueue],
  queueConsumers: [
    {
      id: 'PushSender',
      queue: 'PushSend',
      handler: 'workers/send-push.ts',
      batchSize: 1,
      maxConcurrency: 8,
      timeoutSeconds: 60,
      bindings: sender,
      summary: 'Sends one batch of a large room’s push deliveries',
    },
  ],
  eventSubscribers: [
    {
      id: 'PushDispatcher',
      eventTypes: ['message.created'],
      // Only rooms whose push roster has had an entry: nobody to push to elsewhere.
      attributeFilter: { pushTargets: ['true'] },
      handler: 'workers/dispatch-push.ts',
      // One message per invocation: a message whose pushes are slow delays no other message's.
      batchSize: 1,
      maxConcurrency: 10,
      timeoutSeconds: 60,
      // Six times the consumer's timeout, as AWS advises for SQS event sources.
      visibilityTimeoutSeconds: 360,
      maxReceiveCount: 5,
      bindings: [...sender, 'queue:PushSend'],
      summary: "Finds a new message's push recipients in the room's roster; sends small rooms itself, queues batches for large ones",
    },
    {
      id: 'PushRosterKeeper',
      eventTypes: ['room.member_joined', 'room.member_left'],
      handler: 'workers/keep-push-rosters.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write'],
      summary: "A membership change brings the member's entry in the room's push roster in line with the membership",
    },
  ],
};
