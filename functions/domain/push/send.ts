import { createHash } from 'node:crypto';
import { type ProjectVapidKeys, projectVapidKeys, type SendingConfig, sendingConfig } from '#domain/push/config';
import { recordWebPushOutcome, removeDeadTarget } from '#domain/push/targets';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import {
  markDeviceSent,
  type PushTarget,
  providerOf,
  targetOf,
  userTargets,
  WEB_PUSH_FAILURE_GATE,
  type WebSubscriptionItem,
} from '#shared/db/push';
import { type PushRecordItem, pushRecordItemFor, putPushRecords } from '#shared/db/push-record';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { OutboundError } from '#shared/outbound';
import { sendApns } from '#shared/providers/apns';
import { type MobileNotification, type MobileSendResult, sendFcmLegacy, sendFcmV1 } from '#shared/providers/fcm';
import { sendWebPush } from '#shared/providers/web-push';
import { secretValue } from '#shared/secrets';

/** One queued unit of push work: a message's notice and the targets to send it to. */
export interface PushBatch {
  readonly projectId: string;
  readonly message: { readonly roomId: string; readonly messageId: number; readonly userId: string; readonly preview: string | null };
  readonly deliveries: readonly { readonly userId: string; readonly target: PushTarget }[];
}

/** Pushes in flight at once from one invocation: providers answer in tens of milliseconds, so this keeps a batch short. */
const SEND_CONCURRENCY = 8;

export type PushOutcome = 'sent' | 'failed' | 'removed' | 'skipped';

interface Context {
  readonly batch: PushBatch;
  readonly settings: SendingConfig;
  legacyKey?: Promise<string | undefined>;
  vapid?: Promise<ProjectVapidKeys>;
}

/**
 * Sends every delivery of a batch, applies each answer to its target (the web push failure gate,
 * dead tokens removed), and keeps a record per push for the client's acknowledgement. A failed
 * push is not retried here: a web subscription tries again on the next message, as the spec's
 * table says, and mobile providers queue and retry on their side. `settings` is the project's
 * sending configuration when the caller has already opened it (the dispatcher's inline batch),
 * so its sealed keys are not opened twice.
 */
export async function sendPushBatch(batch: PushBatch, settings?: SendingConfig): Promise<Record<PushOutcome, number>> {
  const context: Context = { batch, settings: settings ?? (await sendingConfig(batch.projectId)) };
  const counts: Record<PushOutcome, number> = { sent: 0, failed: 0, removed: 0, skipped: 0 };
  const records: PushRecordItem[] = [];
  const skippedByProvider: Partial<Record<'fcm' | 'apns', number>> = {};
  const sentAt = new Date().toISOString();
  let next = 0;
  const worker = async () => {
    while (next < batch.deliveries.length) {
      const delivery = batch.deliveries[next++] as PushBatch['deliveries'][number];
      const pushId = pushIdFor(batch, delivery.target.id);
      const outcome = await deliver(context, delivery, pushId);
      counts[outcome]++;
      if (outcome === 'skipped' && delivery.target.kind === 'device') {
        const provider = providerOf(delivery.target.platform);
        skippedByProvider[provider] = (skippedByProvider[provider] ?? 0) + 1;
      }
      if (outcome === 'sent' || outcome === 'failed') {
        records.push(
          pushRecordItemFor(batch.projectId, {
            pushId,
            userId: delivery.userId,
            channel: delivery.target.kind === 'web' ? 'web' : providerOf(delivery.target.platform),
            targetId: delivery.target.id,
            roomId: batch.message.roomId,
            messageId: batch.message.messageId,
            status: outcome,
            sentAt,
          }),
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, batch.deliveries.length) }, worker));
  // The pushes are out: losing their records costs acknowledgements, never a second push.
  await putPushRecords(records).catch((error: unknown) =>
    logger.error('push.records_lost', { projectId: batch.projectId, count: records.length, error: error as Error }),
  );
  // Devices registered for a provider the project never configured: silent otherwise, so say it once per batch.
  if (counts.skipped > 0) {
    logger.warn('push.skipped', {
      projectId: batch.projectId,
      reason: 'no provider configured',
      devices: skippedByProvider,
      hint: `configure ${Object.keys(skippedByProvider).join(' and ')} with PUT /push/config (environment ${config.PUSH_ENVIRONMENT})`,
    });
  }
  if (counts.sent > 0) countMetric('push_sent', counts.sent, { projectId: batch.projectId });
  if (counts.failed > 0) countMetric('push_failed', counts.failed, { projectId: batch.projectId });
  if (counts.removed > 0) countMetric('push_target_removed', counts.removed, { projectId: batch.projectId });
  return counts;
}

/**
 * One id per message and target: a batch sent twice (a redelivered job) makes the same ids, so a
 * client acknowledges one push however often it arrived.
 */
function pushIdFor(batch: PushBatch, targetId: string): string {
  const digest = createHash('sha256').update(
    `${batch.projectId}\u0000${batch.message.roomId}\u0000${batch.message.messageId}\u0000${targetId}`,
  );
  return `push_${digest.digest('base64url').slice(0, 24).replace(/[-_]/g, 'x')}`;
}

/** The project's own legacy key, else the operator's global one, read when an FCM push first needs it. */
function legacyKeyOf(context: Context): Promise<string | undefined> {
  context.legacyKey ??= (async () => {
    if (context.settings.fcm?.serverKey) return context.settings.fcm.serverKey;
    if (!boundIfSet('secret:fcm-legacy-key')) return undefined;
    try {
      return await secretValue('fcm-legacy-key');
    } catch (error) {
      logger.error('push.config_error', { reason: 'the fcm-legacy-key secret could not be read', error: error as Error });
      return undefined;
    }
  })();
  return context.legacyKey;
}

/** What the client receives: enough to show the notice and open the room, and the id to acknowledge. */
function payloadOf(batch: PushBatch, pushId: string) {
  return {
    type: 'message' as const,
    pushId,
    projectId: batch.projectId,
    roomId: batch.message.roomId,
    messageId: batch.message.messageId,
    userId: batch.message.userId,
    ...(batch.message.preview === null ? {} : { preview: batch.message.preview }),
  };
}

async function deliver(context: Context, delivery: PushBatch['deliveries'][number], pushId: string): Promise<PushOutcome> {
  const { batch } = context;
  const { target, userId } = delivery;
  try {
    if (target.kind === 'web') {
      context.vapid ??= projectVapidKeys(batch.projectId);
      return await deliverWeb(batch.projectId, context.vapid, userId, target, JSON.stringify(payloadOf(batch, pushId)));
    }
    const result = await deliverMobile(context, target, pushId);
    if (!result) return 'skipped';
    if (result.outcome === 'dead_token') {
      await bookkeeping(batch.projectId, () => removeDeadTarget(batch.projectId, userId, target));
      return 'removed';
    }
    if (result.outcome === 'sent') {
      await bookkeeping(batch.projectId, () => markDeviceSent(batch.projectId, userId, target.id));
      return 'sent';
    }
    logger.warn('push.mobile_failed', { projectId: batch.projectId, deviceId: target.id, status: result.status, reason: result.reason });
    return 'failed';
  } catch (error) {
    // Preparing the push failed (keys that do not open, a subscription the library refuses): nothing was sent.
    logger.warn('push.send_error', { projectId: batch.projectId, targetId: target.id, error: (error as Error).message });
    if (target.kind === 'web') await bookkeeping(batch.projectId, () => recordWebPushOutcome(batch.projectId, userId, target.id, false));
    return 'failed';
  }
}

/** Table writes after a push: their failure is logged, never turned into a failed (and so repeated) push. */
async function bookkeeping(projectId: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    logger.error('push.bookkeeping_failed', { projectId, error: error as Error });
  }
}

/** The spec's state table for one push service answer. */
async function deliverWeb(
  projectId: string,
  vapidKeys: Promise<ProjectVapidKeys>,
  userId: string,
  target: PushTarget & { kind: 'web' },
  payload: string,
): Promise<PushOutcome> {
  const vapid = await vapidKeys;
  let status: number;
  try {
    ({ status } = await sendWebPush(
      { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
      payload,
      { subject: config.VAPID_SUBJECT, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      { timeoutMs: config.PUSH_TIMEOUT_MS },
    ));
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    // No answer at all (timeout, reset, a private address): counted like a 5xx, tried on the next message.
    logger.warn('push.web_unreachable', { projectId: projectId, subscriptionId: target.id, code: error.code });
    await bookkeeping(projectId, () => recordWebPushOutcome(projectId, userId, target.id, false));
    return 'failed';
  }
  if (status === 404 || status === 410) {
    await bookkeeping(projectId, () => removeDeadTarget(projectId, userId, target));
    return 'removed';
  }
  // The spec's "201 or 202": a server answering 200 to a POST is no push service, and counts as a failure.
  if (status === 201 || status === 202) {
    await bookkeeping(projectId, () => recordWebPushOutcome(projectId, userId, target.id, true));
    return 'sent';
  }
  if (status === 400 || status === 401 || status === 403) {
    // The push service refused our request itself (VAPID key, payload): an operator's problem, not the user's.
    logger.error('push.config_error', {
      projectId: projectId,
      subscriptionId: target.id,
      status,
      host: new URL(target.endpoint).host,
    });
  } else {
    logger.warn('push.web_failed', { projectId: projectId, subscriptionId: target.id, status, host: new URL(target.endpoint).host });
  }
  await bookkeeping(projectId, () => recordWebPushOutcome(projectId, userId, target.id, false));
  return 'failed';
}

/** The user's web push subscriptions below the failure gate: where a notice of its own (the daily digest) goes. */
export async function sendableWebSubscriptions(projectId: string, userId: string): Promise<WebSubscriptionItem[]> {
  return (await userTargets(projectId, userId)).items.filter(
    (item): item is WebSubscriptionItem => 'subscriptionId' in item && item.failure_count < WEB_PUSH_FAILURE_GATE,
  );
}

/**
 * A notice that belongs to no message (the daily digest) to the given subscriptions of a user,
 * with the same bookkeeping as a message's pushes: dead subscriptions removed, outcomes counted
 * against the failure gate. No push record: nothing acknowledges it.
 */
export async function sendWebNotice(
  projectId: string,
  userId: string,
  subscriptions: readonly WebSubscriptionItem[],
  notice: Readonly<Record<string, unknown>>,
): Promise<Record<PushOutcome, number>> {
  const counts: Record<PushOutcome, number> = { sent: 0, failed: 0, removed: 0, skipped: 0 };
  if (subscriptions.length === 0) return counts;
  const vapid = projectVapidKeys(projectId);
  const payload = JSON.stringify(notice);
  const outcomes = await Promise.all(
    subscriptions.map(async (item) => {
      const target = targetOf(item) as PushTarget & { kind: 'web' };
      try {
        return await deliverWeb(projectId, vapid, userId, target, payload);
      } catch (error) {
        logger.warn('push.send_error', { projectId, targetId: target.id, error: (error as Error).message });
        return 'failed' as const;
      }
    }),
  );
  for (const outcome of outcomes) counts[outcome]++;
  if (counts.sent > 0) countMetric('push_sent', counts.sent, { projectId });
  if (counts.failed > 0) countMetric('push_failed', counts.failed, { projectId });
  return counts;
}

/** `undefined` when the target's provider is not configured for the project (nothing sent, nothing recorded). */
async function deliverMobile(
  context: Context,
  target: PushTarget & { kind: 'device' },
  pushId: string,
): Promise<MobileSendResult | undefined> {
  const { batch } = context;
  const settings = context.settings;
  const payload = payloadOf(batch, pushId);
  const notification: MobileNotification = {
    title: 'New message',
    body: payload.preview ?? 'New message',
    data: Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, String(value)])),
  };
  if (providerOf(target.platform) === 'fcm') {
    const baseUrl = boundIfSet('outbound:fcm');
    if (!baseUrl) return undefined;
    const legacyKey = await legacyKeyOf(context);
    if (legacyKey)
      return sendFcmLegacy({ baseUrl, serverKey: legacyKey, token: target.token, notification, timeoutMs: config.PUSH_TIMEOUT_MS });
    const fcm = settings.fcm;
    const oauthBaseUrl = boundIfSet('outbound:google-oauth');
    if (!fcm?.projectId || !fcm.serviceAccount || !oauthBaseUrl) return undefined;
    return sendFcmV1({
      baseUrl,
      oauthBaseUrl,
      projectId: fcm.projectId,
      serviceAccount: fcm.serviceAccount,
      token: target.token,
      notification,
    });
  }
  const apns = settings.apns;
  if (!apns) return undefined;
  const baseUrl = boundIfSet(apns.sandbox ? 'outbound:apns-sandbox' : 'outbound:apns');
  if (!baseUrl) return undefined;
  return sendApns({
    baseUrl,
    credentials: { keyId: apns.keyId, teamId: apns.teamId, privateKey: apns.privateKey },
    bundleId: apns.bundleId,
    token: target.token,
    payload: { aps: { alert: { title: notification.title, body: notification.body }, 'mutable-content': 1 }, ...payload },
    pushType: 'alert',
    timeoutMs: config.PUSH_TIMEOUT_MS,
    ...(config.APNS_EXTRA_CA_PEM ? { ca: config.APNS_EXTRA_CA_PEM } : {}),
  });
}
