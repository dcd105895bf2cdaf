import { createHash } from 'node:crypto';
import { config } from '#shared/config';
import { findWebhook, type WebhookItem } from '#shared/db/webhook';
import * as deliveries from '#shared/db/webhook-delivery';
import { type DeliveryItem, type DeliveryStatus, toDelivery } from '#shared/db/webhook-delivery';
import { ConflictError, NotFoundError } from '#shared/errors';
import type { DomainEvent } from '#shared/events';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { OutboundError, send } from '#shared/outbound';
import { currentTraceId } from '#shared/request-context';
import { startWebhookRetry } from '#shared/workflows';
import { eventSubscribers } from '#wiring';
import { subscribersOf, webhookSecretBinding } from './registrations';
import { openSecret } from './secrets';
import { signBody, signTimestamped } from './signing';

/** Waits before attempts 2, 3, 4 and 5: 60 s, 5 min, 30 min, 60 min; later attempts wait 60 min too. */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 3600] as const;

export const WEBHOOK_FAILED_METRIC = 'webhook_delivery_failed';
/** Counted for each delivery a receiver took: beside the failures, the dashboard's failure rate. */
export const WEBHOOK_DELIVERED_METRIC = 'webhook_delivered';

/** Scaled by `WEBHOOK_RETRY_TIME_SCALE` so tests and local runs keep the schedule's proportions. */
export function delayAfterAttemptMs(attempt: number): number {
  const seconds = RETRY_DELAYS_SECONDS[Math.min(attempt, RETRY_DELAYS_SECONDS.length) - 1] ?? 3600;
  return Math.round(seconds * 1000 * config.WEBHOOK_RETRY_TIME_SCALE);
}

/** The state machine's input and each attempt task's output. */
export interface AttemptState {
  readonly projectId: string;
  readonly deliveryId: string;
  readonly status: DeliveryStatus;
  /** When the next attempt is due; the state machine's Wait state waits until then. */
  readonly nextAttemptAt: string | null;
  /** The trace id the schedule runs under: each attempt task makes it current again. */
  readonly traceId?: string;
}

/**
 * How long a first attempt holds its delivery: the dispatcher's timeout, which no attempt outlives
 * (the lease `onceFor` takes for a subscriber, here written with the delivery itself instead of in
 * a claim item of two more writes). Its queue's visibility timeout exceeds it, so the event's own
 * redelivery after a crash finds the hold expired and makes the attempt.
 */
export const FIRST_ATTEMPT_HOLD_MS = (() => {
  const dispatcher = eventSubscribers.find((entry) => entry.id === 'WebhookDispatcher');
  if (!dispatcher) throw new Error('No event subscriber WebhookDispatcher in functions/wiring/');
  return dispatcher.timeoutSeconds * 1000;
})();

/** Stable per event and registration, so an event delivered twice (or republished) makes one delivery. */
export const deliveryIdFor = (eventId: string, webhookId: string) =>
  `whd_${createHash('sha256').update(`${eventId}|${webhookId}`).digest('hex').slice(0, 32)}`;

/**
 * Fans an event out to its subscribers: one delivery record each, the first attempt at once, and
 * for each that fails with attempts left, a state machine execution for the rest of the schedule.
 * A first attempt that succeeds costs no state transition at all.
 */
export async function dispatchEvent(event: DomainEvent): Promise<{ deliveries: number; retrying: number }> {
  const eventId = event.id;
  const subscribers = await subscribersOf(event.projectId, event.type);
  const outcomes = await Promise.all(
    subscribers.map(async (webhook) => {
      const created = await createDelivery(event, webhook);
      const delivery = created ?? (await deliveries.findDelivery(event.projectId, deliveryIdFor(eventId, webhook.webhookId)));
      // A queue redelivery finds the record: finished ones are left alone, a pending one resumes
      // where the earlier try stopped (before its first attempt, or before its execution started).
      if (delivery?.status !== 'pending') return undefined;
      // The same event twice at once (a republished stream record) must not post twice: a first
      // attempt is made only by whoever holds the delivery, and the hold of a crashed one expires.
      if (!created && delivery.attempt_count === 0 && !(await claimFirstAttempt(delivery))) return undefined;
      const outcome =
        delivery.attempt_count === 0
          ? await attemptDelivery(event.projectId, delivery.deliveryId, webhook)
          : {
              projectId: event.projectId,
              deliveryId: delivery.deliveryId,
              status: delivery.status,
              nextAttemptAt: delivery.next_attempt_at,
            };
      if (outcome.status === 'pending') await startRetries(outcome, `${delivery.deliveryId}-${Math.max(delivery.attempt_count, 1)}`);
      return outcome;
    }),
  );
  return { deliveries: outcomes.filter(Boolean).length, retrying: outcomes.filter((outcome) => outcome?.status === 'pending').length };
}

/**
 * Starts the retry schedule under a name derived from the delivery, so starting it twice (a queue
 * redelivery after the first start) is harmless: Step Functions refuses a second execution.
 */
async function startRetries(state: AttemptState, executionName: string): Promise<void> {
  try {
    await startWebhookRetry({ ...state, traceId: currentTraceId() }, executionName);
  } catch (error) {
    if ((error as { name?: string }).name !== 'ExecutionAlreadyExists') throw error;
  }
}

/** `undefined` when this event already has a delivery for this registration (a queue redelivery). */
async function createDelivery(event: DomainEvent, webhook: WebhookItem): Promise<DeliveryItem | undefined> {
  const deliveryId = deliveryIdFor(event.id, webhook.webhookId);
  return deliveries.createDelivery({
    projectId: event.projectId,
    deliveryId,
    webhookId: webhook.webhookId,
    eventType: event.type,
    traceId: currentTraceId(),
    body: JSON.stringify({ type: event.type, projectId: event.projectId, payload: event.payload, createdAt: event.createdAt }),
    attempting_until: Date.now() + FIRST_ATTEMPT_HOLD_MS,
  });
}

const claimFirstAttempt = (delivery: DeliveryItem) => {
  const now = Date.now();
  return deliveries.claimFirstAttempt(delivery.projectId, delivery.deliveryId, now, now + FIRST_ATTEMPT_HOLD_MS);
};

interface PostOutcome {
  readonly httpStatus: number | null;
  readonly error: string | null;
}

/**
 * One signed POST to a user-supplied URL (`send` with its SSRF guard). Any 2xx is success;
 * redirects are not followed (a 3xx is a failure); the per-attempt timeout covers connecting and
 * the answer; private addresses are refused at connect time unless allowed.
 */
async function postSigned(url: string, body: string, headers: Record<string, string>): Promise<PostOutcome> {
  let status: number;
  try {
    ({ status } = await send({ target: 'user', method: 'POST', url, headers, body, timeoutMs: config.WEBHOOK_TIMEOUT_MS }));
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    // The receiver's verdict is its status line: a body past the size cap does not change it.
    if (error.code !== 'response_too_large' || error.status === undefined)
      return { httpStatus: error.status ?? null, error: error.message };
    status = error.status;
  }
  return {
    httpStatus: status,
    error: status >= 200 && status < 300 ? null : `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
  };
}

/**
 * An attempt's headers. The timestamp is the attempt's own, so a retry is signed anew; the
 * body-only signature stays the same across attempts, as the spec has it.
 */
async function signedHeaders(webhook: WebhookItem, delivery: DeliveryItem): Promise<Record<string, string>> {
  const secret = await openSecret(webhook, webhookSecretBinding(webhook));
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'content-type': 'application/json',
    'user-agent': 'serverless-chat-webhooks/1',
    'x-service-signature': signBody(secret, delivery.body),
    'x-service-timestamp': timestamp,
    'x-service-signature-v2': signTimestamped(secret, timestamp, delivery.deliveryId, delivery.body),
    'x-service-event': delivery.eventType,
    'x-service-project-id': delivery.projectId,
    'x-service-delivery-id': delivery.deliveryId,
    // The id of the request that caused the event, for the receiver to quote; a replay keeps it.
    ...(delivery.traceId ? { 'x-trace-id': delivery.traceId } : {}),
  };
}

/**
 * Makes the next attempt of a pending delivery and records it: `delivered` on 2xx, else `pending`
 * with `next_attempt_at` on the schedule, or `failed` (and the `webhook_delivery_failed` metric)
 * once `WEBHOOK_MAX_ATTEMPTS` is reached. A delivery that is not pending is left as it is.
 */
export async function attemptDelivery(projectId: string, deliveryId: string, knownWebhook?: WebhookItem): Promise<AttemptState> {
  const delivery = await deliveries.findDelivery(projectId, deliveryId);
  if (!delivery) throw new NotFoundError('delivery_not_found', `Delivery ${deliveryId} not found`);
  if (delivery.status !== 'pending') return { projectId, deliveryId, status: delivery.status, nextAttemptAt: null };

  const webhook = knownWebhook ?? (await findWebhook(projectId, delivery.webhookId));
  const outcome: PostOutcome = webhook
    ? await postSigned(webhook.url, delivery.body, await signedHeaders(webhook, delivery))
    : { httpStatus: null, error: 'the webhook registration was deleted' };

  const attempt = delivery.attempt_count + 1;
  const delivered = outcome.error === null;
  const status: DeliveryStatus = delivered ? 'delivered' : attempt >= config.WEBHOOK_MAX_ATTEMPTS || !webhook ? 'failed' : 'pending';
  const nextAttemptAt = status === 'pending' ? new Date(Date.now() + delayAfterAttemptMs(attempt)).toISOString() : null;
  // Two attempts racing on one delivery (a replay during a retry) cannot both count.
  const recorded = await deliveries.recordAttempt(projectId, deliveryId, {
    previousAttempts: delivery.attempt_count,
    status,
    nextAttemptAt,
    httpStatus: outcome.httpStatus,
    error: outcome.error,
  });
  if (!recorded) {
    logger.warn('delivery changed during an attempt; leaving it to the other attempt', { deliveryId });
    return { projectId, deliveryId, status: 'failed', nextAttemptAt: null };
  }
  logger.info('webhook attempt', { deliveryId, attempt, status, httpStatus: outcome.httpStatus });
  if (delivered) countMetric(WEBHOOK_DELIVERED_METRIC, 1, { projectId });
  if (status === 'failed') {
    countMetric(WEBHOOK_FAILED_METRIC, 1, { projectId });
    logger.warn('webhook delivery failed', { deliveryId, attempts: attempt, lastError: outcome.error });
  }
  return { projectId, deliveryId, status, nextAttemptAt };
}

export async function listDeliveries(projectId: string, limit: number) {
  return (await deliveries.listDeliveryItems(projectId, limit)).map(toDelivery);
}

/** A failed delivery goes back to `pending` with its attempts reset, and a new execution runs the schedule. */
export async function replayDelivery(projectId: string, deliveryId: string) {
  const now = new Date().toISOString();
  // Held for the replay's execution, so the event redelivered meanwhile does not post it as well.
  const reopened = await deliveries.reopenFailedDelivery(projectId, deliveryId, now, Date.parse(now) + FIRST_ATTEMPT_HOLD_MS);
  if (!reopened) {
    const existing = await deliveries.findDelivery(projectId, deliveryId);
    if (!existing) throw new NotFoundError('delivery_not_found', 'Delivery not found');
    throw new ConflictError('delivery_not_failed', `Only failed deliveries can be replayed; this one is ${existing.status}`);
  }
  await startRetries({ projectId, deliveryId, status: 'pending', nextAttemptAt: now }, `${deliveryId}-replay-${Date.parse(now)}`);
  return toDelivery(reopened);
}
