import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { eventClaimKey, OUTBOX_RETENTION_SECONDS } from '#shared/db/outbox';
import { isConditionFailure } from '#shared/db/transact';
import type { DomainEvent } from '#shared/events';
import { eventSubscribers } from '#wiring';

/**
 * Runs `work` for an event at most once per subscriber (an `eventSubscribers` id of `functions/wiring/`),
 * however often the fan-out delivers it (SNS and SQS deliver at least once, and the publisher
 * republishes after a partial failure). A claim
 * item is written first with a lease as long as the subscriber may run; a second delivery meanwhile
 * or afterwards skips. If `work` throws, the claim is released so the retry runs it; if the
 * function dies mid-way, the lease runs out and the retry takes the claim over. Costs two writes,
 * so subscribers call it only when there is work to protect (watchers exist).
 *
 * @returns whether `work` ran
 */
export async function onceFor(subscriber: string, event: DomainEvent, work: () => Promise<void>): Promise<boolean> {
  const entry = eventSubscribers.find((candidate) => candidate.id === subscriber);
  if (!entry) throw new Error(`No event subscriber ${subscriber} in functions/wiring/`);
  const leaseMs = entry.timeoutSeconds * 1000;
  const key = eventClaimKey(event.projectId, event.id, subscriber);
  const now = Date.now();
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: { ...key, state: 'running', leaseUntil: now + leaseMs, ttl: Math.floor(now / 1000) + OUTBOX_RETENTION_SECONDS },
        ConditionExpression: 'attribute_not_exists(pk) OR (#state = :running AND leaseUntil < :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':running': 'running', ':now': now },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
  try {
    await work();
  } catch (error) {
    await db
      .send(
        new DeleteCommand({
          TableName: tableName,
          Key: key,
          ConditionExpression: '#state = :running',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':running': 'running' },
        }),
      )
      .catch(() => undefined);
    throw error;
  }
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: key,
      UpdateExpression: 'SET #state = :done',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':done': 'done' },
    }),
  );
  return true;
}
