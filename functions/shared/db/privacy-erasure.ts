import { createHash } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { isConditionFailure } from './transact';

/**
 * Who a GDPR record is about, without naming them: a SHA-256 of project and user id. The same
 * subject finds their erasure again (a retry resumes it, a repeat answers it), and the record holds
 * no personal data; whoever knows the id can confirm the erasure, which is what an audit is for.
 */
export const subjectRef = (projectId: string, userId: string) =>
  createHash('sha256').update(`${projectId}\u0000${userId}`).digest('hex').slice(0, 32);

export const privacyPk = (projectId: string) => `${projectPk(projectId)}#PRIVACY`;
export const erasureKey = (projectId: string, userId: string) => ({
  pk: privacyPk(projectId),
  sk: `ERASURE#${subjectRef(projectId, userId)}`,
});

export const ERASURE_STATES = ['running', 'done'] as const;

/**
 * The durable record of one subject's erasure, and its audit trail once done: the steps finished
 * so far with what each erased (a count), who asked, when. A crash between steps leaves `running`
 * with the finished ones listed; the next call runs the rest.
 */
export const erasureItem = z.object({
  pk: z.string(),
  sk: z.string(),
  erasureId: z.string(),
  subjectRef: z.string(),
  state: z.enum(ERASURE_STATES),
  /** Finished steps and the number of items each erased or made anonymous. */
  steps: z.record(z.string(), z.number()),
  /** The admin's user id, `subject` when the subject asked, `service` for an API key. */
  requestedBy: z.string(),
  startedAt: z.string(),
  completedAt: z.nullable(z.string()),
  attempts: z.number().check(z.int()),
});
export type ErasureItem = z.infer<typeof erasureItem>;

/** The subject's erasure record, read strongly consistent; `undefined` when none was ever started. */
export async function findErasure(projectId: string, userId: string): Promise<ErasureItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: erasureKey(projectId, userId), ConsistentRead: true }));
  return Item ? erasureItem.parse(Item) : undefined;
}

/** Starts the record unless one exists: `false` when it did (the caller reads it and resumes or answers it). */
export const startErasure = (item: ErasureItem): Promise<boolean> => putIfAbsent(item);

/** Counts one more run of a record found `running` (a resumed erasure). */
export async function countErasureAttempt(projectId: string, userId: string): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: erasureKey(projectId, userId),
      UpdateExpression: 'ADD attempts :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
}

/** Records a finished step and its count; repeating it (a step run twice) rewrites the same entry. */
export async function recordErasureStep(projectId: string, userId: string, step: string, count: number): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: erasureKey(projectId, userId),
      UpdateExpression: 'SET steps.#step = :count',
      ExpressionAttributeNames: { '#step': step },
      ExpressionAttributeValues: { ':count': count },
    }),
  );
}

/**
 * Marks the erasure done, unless a concurrent run did first (then its time stays); the record then
 * answers every later request for the subject.
 */
export async function finishErasure(projectId: string, userId: string, completedAt: string): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: erasureKey(projectId, userId),
        UpdateExpression: 'SET #state = :done, completedAt = :at',
        ConditionExpression: '#state = :running',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':running': 'running', ':at': completedAt },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
