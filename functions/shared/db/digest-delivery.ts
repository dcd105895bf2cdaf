import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deleteAll } from './batch';
import { db, tableName } from './client';
import { userPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import type { TransactPart } from './transact';

/**
 * One digest delivery: (project, user, digest date, channel) is the key, so the conditional put
 * that claims it lets exactly one run deliver, however many runs or retries meet. Kept 90 days.
 */
export const DIGEST_CHANNELS = ['in_app', 'web_push', 'email'] as const;
export type DigestChannel = (typeof DIGEST_CHANNELS)[number];
export const DIGEST_DELIVERY_TTL_SECONDS = 90 * 86_400;

const deliveriesPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#DIGEST`;
export const digestDeliveryKey = (projectId: string, userId: string, digestDate: string, channel: DigestChannel) => ({
  pk: deliveriesPk(projectId, userId),
  sk: `D#${digestDate}#${channel}`,
});

export const digestDeliveryItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  userId: z.string(),
  digestDate: z.string(),
  channel: z.enum(DIGEST_CHANNELS),
  deliveredAt: z.string(),
  ttl: z.number().check(z.int()),
});
export type DigestDeliveryItem = z.infer<typeof digestDeliveryItem>;

const deliveryItem = (projectId: string, userId: string, digestDate: string, channel: DigestChannel, now: Date): DigestDeliveryItem => ({
  ...digestDeliveryKey(projectId, userId, digestDate, channel),
  projectId,
  userId,
  digestDate,
  channel,
  deliveredAt: now.toISOString(),
  ttl: Math.floor(now.getTime() / 1000) + DIGEST_DELIVERY_TTL_SECONDS,
});

/** Claims the delivery: `false` when another run (or an earlier attempt) has it. */
export function claimDigestDelivery(
  projectId: string,
  userId: string,
  digestDate: string,
  channel: DigestChannel,
  now: Date,
): Promise<boolean> {
  return putIfAbsent(deliveryItem(projectId, userId, digestDate, channel, now));
}

/** The same claim as a transaction part: the transaction fails when the delivery is claimed already. */
export const claimDigestDeliveryPart = (
  projectId: string,
  userId: string,
  digestDate: string,
  channel: DigestChannel,
  now: Date,
): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: deliveryItem(projectId, userId, digestDate, channel, now),
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** Gives a claim back after the send failed, so the job's retry may deliver. */
export const releaseDigestDelivery = (projectId: string, userId: string, digestDate: string, channel: DigestChannel) =>
  deleteAll([digestDeliveryKey(projectId, userId, digestDate, channel)]);

/** Every delivery of the user still kept, oldest date first (export; tests). */
export async function digestDeliveriesOf(projectId: string, userId: string): Promise<DigestDeliveryItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': deliveriesPk(projectId, userId) },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => digestDeliveryItem.parse(item));
}

/** Erasure: every delivery record of the user. */
export async function deleteDigestDeliveries(projectId: string, userId: string): Promise<void> {
  const deliveries = await digestDeliveriesOf(projectId, userId);
  await deleteAll(deliveries.map(({ pk, sk }) => ({ pk, sk })));
}
