import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { OUTBOX_RETENTION_SECONDS, outboxPk } from './outbox';
import { isConditionFailure } from './transact';

/**
 * A subscriber's claim on an event (`DONE#<subscriber>`, beside the event's outbox item), or on one
 * part of its work (`DONE#<subscriber>#<part>`, {@link claimantOf}): `running` with a lease while
 * the subscriber works, `done` after. Kept as long as the outbox item.
 */
export const eventClaimKey = (projectId: string, eventId: string, subscriber: string) => ({
  pk: outboxPk(projectId, eventId),
  sk: `DONE#${subscriber}`,
});

/** Who holds a claim: the subscriber, or the subscriber for one part of an event's work. */
export const claimantOf = (subscriber: string, part?: string) => (part === undefined ? subscriber : `${subscriber}#${part}`);

const stateNames = { '#state': 'state' };

/**
 * Claims the event for the subscriber until `leaseUntil` (epoch ms): `false` when it is done, or
 * running under a lease that has not run out.
 */
export async function claimEvent(
  projectId: string,
  eventId: string,
  subscriber: string,
  now: number,
  leaseUntil: number,
): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...eventClaimKey(projectId, eventId, subscriber),
          state: 'running',
          leaseUntil,
          ttl: Math.floor(now / 1000) + OUTBOX_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR (#state = :running AND leaseUntil < :now)',
        ExpressionAttributeNames: stateNames,
        ExpressionAttributeValues: { ':running': 'running', ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Gives a running claim back, so the next delivery of the event runs the subscriber again. */
export async function releaseEventClaim(projectId: string, eventId: string, subscriber: string): Promise<void> {
  await db.send(
    new DeleteCommand({
      TableName: tableName,
      Key: eventClaimKey(projectId, eventId, subscriber),
      ConditionExpression: '#state = :running',
      ExpressionAttributeNames: stateNames,
      ExpressionAttributeValues: { ':running': 'running' },
    }),
  );
}

/** Marks the claim done: every later delivery of the event skips. */
export async function completeEventClaim(projectId: string, eventId: string, subscriber: string): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: eventClaimKey(projectId, eventId, subscriber),
      UpdateExpression: 'SET #state = :done',
      ExpressionAttributeNames: stateNames,
      ExpressionAttributeValues: { ':done': 'done' },
    }),
  );
}
