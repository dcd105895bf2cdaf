import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { userPk } from './keys';
import { isConditionFailure } from './transact';

export const SIGN_IN_FAILURES_SK = 'SIGNIN_FAILURES' as const;

/**
 * Failed sign-ins of one (project, user id), whether or not the user exists, so that a lockout
 * says nothing about who does. `ttl` (epoch seconds) is when the record is forgotten; DynamoDB
 * deletes expired items only eventually, so readers treat an expired record as absent.
 */
export const signInFailuresItem = z.object({
  pk: z.string(),
  sk: z.literal(SIGN_IN_FAILURES_SK),
  failures: z.number().check(z.int(), z.positive()),
  /** Epoch ms until which sign-in is refused. */
  lockedUntil: z.optional(z.number()),
  ttl: z.number().check(z.int()),
});
export type SignInFailuresItem = z.infer<typeof signInFailuresItem>;

export const signInFailuresKey = (projectId: string, userId: string) => ({
  pk: userPk(projectId, userId),
  sk: SIGN_IN_FAILURES_SK,
});

const nowSeconds = (nowMs: number) => Math.floor(nowMs / 1000);

/** The unexpired record, or `undefined` (a strongly consistent read: a lock just set must be seen). */
export async function findSignInFailures(projectId: string, userId: string, nowMs: number): Promise<SignInFailuresItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: signInFailuresKey(projectId, userId), ConsistentRead: true }));
  if (!Item) return undefined;
  const item = signInFailuresItem.parse(Item);
  return item.ttl > nowSeconds(nowMs) ? item : undefined;
}

/**
 * Counts one failure atomically and keeps the record until `ttlSeconds`; a record past its ttl
 * starts over at one. Returns the count, this failure included.
 */
export async function addSignInFailure(projectId: string, userId: string, nowMs: number, ttlSeconds: number): Promise<number> {
  const Key = signInFailuresKey(projectId, userId);
  const names = { '#ttl': 'ttl' };
  // Two tries: a concurrent failure may restart an expired record between the update and the put.
  for (let attempt = 0; ; attempt++) {
    try {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key,
          UpdateExpression: 'ADD failures :one SET #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(pk) OR #ttl > :now',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':one': 1, ':ttl': ttlSeconds, ':now': nowSeconds(nowMs) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return signInFailuresItem.parse(Attributes).failures;
    } catch (error) {
      if (!isConditionFailure(error) || attempt > 0) throw error;
    }
    try {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...Key, failures: 1, ttl: ttlSeconds } satisfies SignInFailuresItem,
          ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':now': nowSeconds(nowMs) },
        }),
      );
      return 1;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * Locks sign-in until `lockedUntil` (epoch ms), keeping the record until `ttlSeconds`. A shorter
 * lock never replaces a longer one that a concurrent failure set.
 */
export async function lockSignIn(projectId: string, userId: string, lockedUntil: number, ttlSeconds: number): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: signInFailuresKey(projectId, userId),
        UpdateExpression: 'SET lockedUntil = :until, #ttl = :ttl',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lockedUntil) OR lockedUntil < :until)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':until': lockedUntil, ':ttl': ttlSeconds },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Forgets the failures (a successful sign-in). */
export async function clearSignInFailures(projectId: string, userId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: signInFailuresKey(projectId, userId) }));
}
