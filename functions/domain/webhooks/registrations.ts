import { randomBytes } from 'node:crypto';
import { forgetRegisteredTypes } from '#domain/events/message-attributes';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import * as registrations from '#shared/db/webhook';
import { listWebhookItems, toWebhook, type WebhookItem, webhookKey } from '#shared/db/webhook';
import { closestMatch } from '#shared/did-you-mean';
import { BadRequestError, NotFoundError } from '#shared/errors';
import { EVENT_TYPES, isEventType } from '#shared/events';
import { logger } from '#shared/logger';
import { assertAllowedTargetUrl } from '#shared/outbound-guard';
import { type SealBinding, UnsealError } from '#shared/sealing';
import { openSecret, sealSecret } from './secrets';

export const MAX_WEBHOOKS_PER_PROJECT = 50;

/** Webhook ids carry their project (`wh_<projectId>_<random>`) so public verification can find them. */
export const WEBHOOK_ID_PATTERN = /^wh_([a-z0-9][a-z0-9-]{1,62})_([0-9a-f]{24})$/;

/** What a registration's sealed secret is bound to: it opens on this registration only. */
export const webhookSecretBinding = (webhook: Pick<WebhookItem, 'projectId' | 'webhookId'>): SealBinding => ({
  purpose: 'webhook-secret',
  projectId: webhook.projectId,
  recordId: webhook.webhookId,
});

const subscribersCache = new TtlCache<WebhookItem[]>(config.CACHE_TTL_MS);

export async function registerWebhook(
  projectId: string,
  input: { url: string; eventTypes: readonly string[]; secret?: string },
  createdBy: string,
) {
  const unknown = input.eventTypes.filter((type) => !isEventType(type));
  if (unknown.length > 0) {
    const named = unknown.map((type) => {
      const near = closestMatch(type, EVENT_TYPES);
      return near === undefined ? `\`${type}\`` : `\`${type}\` (did you mean \`${near}\`?)`;
    });
    throw new BadRequestError(
      `Unknown event types: ${named.join(', ')}`,
      [{ field: 'body.eventTypes', message: `unknown event types ${named.join(', ')}` }],
      'unknown_event_type',
    );
  }
  const url = assertAllowedTargetUrl(input.url);
  const existing = await listWebhookItems(projectId);
  if (existing.length >= MAX_WEBHOOKS_PER_PROJECT)
    throw new BadRequestError(`At most ${MAX_WEBHOOKS_PER_PROJECT} webhooks per project`, undefined, 'too_many_webhooks');

  const secret = input.secret ?? randomBytes(32).toString('hex');
  const webhookId = `wh_${projectId}_${randomBytes(12).toString('hex')}`;
  const item: WebhookItem = {
    ...webhookKey(projectId, webhookId),
    projectId,
    webhookId,
    url: url.toString(),
    eventTypes: [...new Set(input.eventTypes)],
    ...(await sealSecret(secret, webhookSecretBinding({ projectId, webhookId }))),
    createdAt: new Date().toISOString(),
    createdBy,
  };
  await registrations.createWebhook(item);
  subscribersCache.delete(projectId);
  forgetRegisteredTypes(projectId);
  // The secret is returned this once and never again.
  return { ...toWebhook(item), secret };
}

export async function listWebhooks(projectId: string) {
  return (await listWebhookItems(projectId)).map(toWebhook);
}

export async function deleteWebhook(projectId: string, webhookId: string): Promise<void> {
  if (!(await registrations.deleteWebhook(projectId, webhookId))) throw new NotFoundError('webhook_not_found', 'Webhook not found');
  subscribersCache.delete(projectId);
  forgetRegisteredTypes(projectId);
}

/** Registrations subscribed to an event type: one Query per project, cached for `CACHE_TTL_MS`. */
export async function subscribersOf(projectId: string, eventType: string): Promise<WebhookItem[]> {
  let all = subscribersCache.get(projectId);
  if (!all) {
    all = await listWebhookItems(projectId);
    subscribersCache.set(projectId, all);
  }
  return all.filter((webhook) => webhook.eventTypes.includes(eventType));
}

/**
 * The signing secret of a registered webhook, found from its id alone (public verification);
 * `undefined` when the stored secret does not open (moved from another registration, tampered
 * with, or under a key the `webhook-key` ring no longer holds), which is logged for the operator.
 */
export async function secretOfWebhook(webhookId: string): Promise<string | undefined> {
  const projectId = WEBHOOK_ID_PATTERN.exec(webhookId)?.[1];
  const webhook = projectId ? await registrations.findWebhook(projectId, webhookId) : undefined;
  if (!webhook) throw new NotFoundError('webhook_not_found', 'Webhook not found');
  try {
    return await openSecret(webhook, webhookSecretBinding(webhook));
  } catch (error) {
    if (!(error instanceof UnsealError)) throw error;
    logger.error('webhook.secret_unopenable', { projectId: webhook.projectId, webhookId, error });
    return undefined;
  }
}
