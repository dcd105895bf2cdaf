import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { isConditionFailure } from './transact';

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
  /** The trace id of the request that caused the event (docs/operations.md, "Trace ids"); sent as `X-Trace-Id`. */
  traceId: z.optional(z.string()),
  status: deliveryStatus,
  attempt_count: z.number().check(z.int()),
  next_attempt_at: z.nullable(z.string()),
  last_http_status: z.nullable(z.number().check(z.int())),
  last_error: z.nullable(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  /**
   * Epoch ms until which an attempt with no attempts before it is under way (set by whoever
   * created or reopened the delivery, or claimed it): a repeated event leaves the delivery alone
   * till then instead of posting it a second time.
   */
  attempting_until: z.optional(z.number()),
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
    traceId: item.traceId ?? null,
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

export async function findDelivery(projectId: string, deliveryId: string): Promise<DeliveryItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: deliveryKey(projectId, deliveryId), ConsistentRead: true }));
  return Item ? deliveryItem.parse(Item) : undefined;
}

/**
 * Stores a new delivery, pending and due now. `undefined` when it exists already: its id is
 * derived from the event and the registration, so that is a redelivered event.
 */
export async function createDelivery(
  delivery: Pick<DeliveryItem, 'projectId' | 'deliveryId' | 'webhookId' | 'eventType' | 'body' | 'attempting_until'> & {
    readonly traceId?: string | undefined;
  },
): Promise<DeliveryItem | undefined> {
  const now = new Date().toISOString();
  const item: DeliveryItem = {
    ...deliveryKey(delivery.projectId, delivery.deliveryId),
    gsi1pk: deliveriesIndexKey(delivery.projectId),
    gsi1sk: `${now}#${delivery.deliveryId}`,
    projectId: delivery.projectId,
    deliveryId: delivery.deliveryId,
    webhookId: delivery.webhookId,
    eventType: delivery.eventType,
    ...(delivery.traceId ? { traceId: delivery.traceId } : {}),
    body: delivery.body,
    status: 'pending',
    attempt_count: 0,
    next_attempt_at: now,
    last_http_status: null,
    last_error: null,
    createdAt: now,
    updatedAt: now,
    ...(delivery.attempting_until === undefined ? {} : { attempting_until: delivery.attempting_until }),
  };
  return (await putIfAbsent(item)) ? item : undefined;
}

/** A project's deliveries, newest first (gsi1). */
export async function listDeliveryItems(projectId: string, limit: number): Promise<DeliveryItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': deliveriesIndexKey(projectId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => deliveryItem.parse(raw));
}

export interface AttemptRecord {
  /** `attempt_count` the attempt was made on: two attempts racing on one delivery (a replay during a retry) cannot both count. */
  readonly previousAttempts: number;
  readonly status: DeliveryStatus;
  readonly nextAttemptAt: string | null;
  readonly httpStatus: number | null;
  readonly error: string | null;
}

/** Records an attempt of a pending delivery; false when the delivery changed since it was read (another attempt counted). */
export async function recordAttempt(projectId: string, deliveryId: string, attempt: AttemptRecord): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: deliveryKey(projectId, deliveryId),
        UpdateExpression:
          'SET #status = :status, attempt_count = :attempt, next_attempt_at = :next, last_http_status = :http, last_error = :error, updatedAt = :now',
        ConditionExpression: 'attempt_count = :previous AND #status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': attempt.status,
          ':attempt': attempt.previousAttempts + 1,
          ':next': attempt.nextAttemptAt,
          ':http': attempt.httpStatus,
          ':error': attempt.error,
          ':now': new Date().toISOString(),
          ':previous': attempt.previousAttempts,
          ':pending': 'pending',
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Takes the first attempt of a pending delivery that has none yet, unless another attempt holds it
 * (`attempting_until` still ahead of `nowMs`): false when it is held, attempted or not pending.
 */
export async function claimFirstAttempt(projectId: string, deliveryId: string, nowMs: number, untilMs: number): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: deliveryKey(projectId, deliveryId),
        UpdateExpression: 'SET attempting_until = :until',
        ConditionExpression:
          '#status = :pending AND attempt_count = :zero AND (attribute_not_exists(attempting_until) OR attempting_until < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':until': untilMs, ':pending': 'pending', ':zero': 0, ':now': nowMs },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * A failed delivery back to `pending` with no attempts, due `now`, its first attempt held for the
 * replay's execution until `attemptingUntil`; `undefined` when it is not failed (or does not exist).
 */
export async function reopenFailedDelivery(
  projectId: string,
  deliveryId: string,
  now: string,
  attemptingUntil: number,
): Promise<DeliveryItem | undefined> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: deliveryKey(projectId, deliveryId),
        UpdateExpression:
          'SET #status = :pending, attempt_count = :zero, next_attempt_at = :now, updatedAt = :now, attempting_until = :until',
        ConditionExpression: '#status = :failed',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'pending', ':zero': 0, ':now': now, ':failed': 'failed', ':until': attemptingUntil },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return deliveryItem.parse(Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** A pending delivery to `failed` with `lastError`, nothing more due; false when it is not pending (or does not exist). */
export async function failPendingDelivery(projectId: string, deliveryId: string, lastError: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: deliveryKey(projectId, deliveryId),
        UpdateExpression: 'SET #status = :failed, next_attempt_at = :none, last_error = :error, updatedAt = :now',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':failed': 'failed',
          ':none': null,
          ':error': lastError,
          ':now': new Date().toISOString(),
          ':pending': 'pending',
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
