import * as z from '#shared/schema';
import { projectPk } from './keys';

/**
 * A webhook registration. The secret is either plaintext (`secret`) or AES-256-GCM ciphertext
 * (`secretCiphertext` + `secretIv`, base64, and the id of the key, `secretKeyId`), depending on
 * `WEBHOOK_SECRET_ENCRYPTION_KEY` (`functions/shared/sealing.ts`).
 */
export const webhookItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  webhookId: z.string(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  secret: z.optional(z.string()),
  secretCiphertext: z.optional(z.string()),
  secretIv: z.optional(z.string()),
  secretKeyId: z.optional(z.string()),
  createdAt: z.string(),
  createdBy: z.string(),
});
export type WebhookItem = z.infer<typeof webhookItem>;

/** All registrations of a project share a partition: one Query finds the subscribers of an event. */
export const webhooksPk = (projectId: string) => `${projectPk(projectId)}#WEBHOOKS`;
export const webhookKey = (projectId: string, webhookId: string) => ({ pk: webhooksPk(projectId), sk: `WH#${webhookId}` });

export function toWebhook(item: WebhookItem) {
  return { id: item.webhookId, url: item.url, eventTypes: item.eventTypes, createdAt: item.createdAt, createdBy: item.createdBy };
}

export const deliveryStatus = z.enum(['pending', 'delivered', 'failed']);
export type DeliveryStatus = z.infer<typeof deliveryStatus>;

/**
 * One event on its way to one registration. `body` is the exact JSON sent on every attempt, so
 * the signature and `X-Service-Delivery-Id` stay the same across retries. gsi1 lists a project's
 * deliveries newest first.
 */
export const deliveryItem = z.object({
  pk: z.string(),
  sk: z.literal('DELIVERY'),
  gsi1pk: z.string(),
  gsi1sk: z.string(),
  projectId: z.string(),
  deliveryId: z.string(),
  webhookId: z.string(),
  eventType: z.string(),
  body: z.string(),
  status: deliveryStatus,
  attempt_count: z.number().check(z.int()),
  next_attempt_at: z.nullable(z.string()),
  last_http_status: z.nullable(z.number().check(z.int())),
  last_error: z.nullable(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type DeliveryItem = z.infer<typeof deliveryItem>;

export const deliveryKey = (projectId: string, deliveryId: string) => ({
  pk: `${projectPk(projectId)}#WHD#${deliveryId}`,
  sk: 'DELIVERY' as const,
});
export const deliveriesIndexKey = (projectId: string) => `${projectPk(projectId)}#WHDS`;

export function toDelivery(item: DeliveryItem) {
  return {
    id: item.deliveryId,
    webhookId: item.webhookId,
    eventType: item.eventType,
    status: item.status,
    attempt_count: item.attempt_count,
    next_attempt_at: item.next_attempt_at,
    last_http_status: item.last_http_status,
    last_error: item.last_error,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
}
export type Delivery = ReturnType<typeof toDelivery>;
