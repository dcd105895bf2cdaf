import type { Binding } from './bindings.ts';
import type { Area, QueueDefinition } from './types.ts';

export const digestQueue: QueueDefinition = {
  id: 'Digest',
  // Six times the worker's timeout, as AWS advises for SQS event sources.
  visibilityTimeoutSeconds: 360,
  maxReceiveCount: 3,
  summary: 'Daily digest jobs: pages of projects and subscribers, and batches of users to deliver to',
};

/**
 * What delivering a digest touches: the table (preferences, rooms, messages, deliveries, the
 * in-app notification, its frame on the user's channel), the queue (the next page), the AI provider (room summaries), web push (the
 * VAPID keys, sealed under `signing-key`, older ones under `webhook-key`), SES, and the link and key
 * of the unsubscribe link (HMAC under the project's signing secret, sealed under `signing-key`).
 */
const deliverer: readonly Binding[] = [
  'table:read',
  'table:write',
  'queue:Digest',
  'outbound:ai',
  'secret:ai-key',
  'secret:signing-key',
  'secret:webhook-key',
  'email:digest',
  'link:api',
  // The in-app notification goes out as a `notification` frame on the user's channel.
  'connections:manage',
];

/** The daily digest: preferences, the schedule, the on-demand run and the e-mail unsubscribe link. */
export const digest: Area = {
  id: 'Digest',
  summary: 'Daily digest preferences, the 08:00 UTC schedule, the admin run, delivery in-app, by web push and by e-mail (SES)',
  httpRoutes: [
    {
      id: 'GetDigestPreferences',
      method: 'GET',
      path: '/digest/preferences',
      handler: 'http/digest/get-preferences.ts',
      auth: 'user',
      bindings: ['table:read'],
      summary: "The caller's digest preferences (defaults when never set)",
    },
    {
      id: 'UpdateDigestPreferences',
      method: 'PATCH',
      path: '/digest/preferences',
      handler: 'http/digest/update-preferences.ts',
      auth: 'user',
      bindings: ['table:read', 'table:write'],
      summary: "Change some of the caller's digest preferences; the others keep their values",
    },
    {
      id: 'RunDigest',
      method: 'POST',
      path: '/admin/digest/run',
      handler: 'http/digest/run-digest.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['queue:Digest'],
      audit: { action: 'digest.run', target: ['body.digestDate', 'body.maxUsers'] },
      summary: "Queue the project's digest of one date now, whatever DAILY_DIGEST_ENABLED says",
    },
    {
      id: 'UnsubscribeDigestEmail',
      method: 'GET',
      path: '/digest/unsubscribe',
      handler: 'http/digest/unsubscribe.ts',
      auth: 'none',
      // The link carries its own proof (an HMAC bound to project and user); the limit keeps guessing slow.
      rateLimit: { bucket: 'digest-unsubscribe', per: 'ip', setting: 'RATE_LIMIT_DIGEST_UNSUBSCRIBE_PER_MINUTE' },
      bindings: ['table:read', 'table:write', 'secret:signing-key'],
      summary: "The e-mail's unsubscribe link: turns the digest e-mail off for the user the signed token names",
    },
  ],
  queues: [digestQueue],
  queueConsumers: [
    {
      id: 'DigestWorker',
      queue: 'Digest',
      handler: 'workers/digest.ts',
      // One job (25 users) per invocation: a batch of jobs would make one slow user hold four other jobs' retries.
      batchSize: 1,
      // It may ask the AI model for room summaries: AI consumers run at most 5 batches at once.
      maxConcurrency: 5,
      timeoutSeconds: 60,
      bindings: deliverer,
      summary: 'Pages through projects and digest subscribers, and delivers the digest to batches of users',
    },
  ],
  schedules: [
    {
      id: 'DailyDigest',
      cron: 'cron(0 8 * * ? *)',
      switch: 'DAILY_DIGEST_ENABLED',
      handler: 'workers/daily-digest.ts',
      timeoutSeconds: 30,
      bindings: ['queue:Digest'],
      summary: "Starts the day's digest of every project at 08:00 UTC (when DAILY_DIGEST_ENABLED=true)",
    },
  ],
};
