import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { roomPk } from './keys';
import { isConditionFailure, type TransactPart } from './transact';

/**
 * A room's summary scheduling state, beside the room: `pending` messages counted since the last
 * summary, `lastSummaryAt` (epoch s), `lastSummarizedMessageId`, and the job slot (`jobId`,
 * `jobQueuedAt`, epoch s) that at most one queued summary job holds at a time.
 */
export const roomSummaryStateKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'SUMMARY_STATE' });

export interface RoomSummaryState {
  readonly pending: number;
  /** Epoch seconds; 0 before the first summary. */
  readonly lastSummaryAt: number;
  readonly lastSummarizedMessageId: number;
  readonly jobId?: string;
}

const toState = (item: Record<string, unknown>): RoomSummaryState => ({
  pending: Number(item.pending ?? 0),
  lastSummaryAt: Number(item.lastSummaryAt ?? 0),
  lastSummarizedMessageId: Number(item.lastSummarizedMessageId ?? 0),
  ...(typeof item.jobId === 'string' ? { jobId: item.jobId } : {}),
});

/** Counts `count` more messages; the state after the count. */
export async function addPendingMessages(projectId: string, roomId: string, count: number): Promise<RoomSummaryState> {
  const { Attributes = {} } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: roomSummaryStateKey(projectId, roomId),
      UpdateExpression: 'ADD pending :count',
      ExpressionAttributeValues: { ':count': count },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toState(Attributes);
}

/** The room's state (consistent), an empty one for a room never counted. */
export async function readRoomSummaryState(projectId: string, roomId: string): Promise<RoomSummaryState> {
  const { Item = {} } = await db.send(
    new GetCommand({ TableName: tableName, Key: roomSummaryStateKey(projectId, roomId), ConsistentRead: true }),
  );
  return toState(Item);
}

export interface SummaryJobClaim {
  readonly jobId: string;
  /** Epoch seconds. */
  readonly now: number;
  /** A slot claimed this long ago is taken as lost (its job died in its queue) and may be claimed again. */
  readonly staleAfterSeconds: number;
  readonly minMessages: number;
  readonly minIntervalSeconds: number;
}

/**
 * Claims the room's job slot for `jobId` when it is free (or stale) and the thresholds still hold;
 * `false` when another batch holds it or the thresholds no longer pass.
 */
export async function claimSummaryJob(projectId: string, roomId: string, claim: SummaryJobClaim): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomSummaryStateKey(projectId, roomId),
        UpdateExpression: 'SET jobQueuedAt = :now, jobId = :job',
        // The thresholds again, inside the claim: a job that finished since the count was read
        // has moved lastSummaryAt and pending on, and must not be followed by a second one at once.
        ConditionExpression:
          '(attribute_not_exists(jobQueuedAt) OR jobQueuedAt < :stale) AND pending >= :min ' +
          'AND (attribute_not_exists(lastSummaryAt) OR lastSummaryAt <= :intervalAgo)',
        ExpressionAttributeValues: {
          ':now': claim.now,
          ':job': claim.jobId,
          ':stale': claim.now - claim.staleAfterSeconds,
          ':min': claim.minMessages,
          ':intervalAgo': claim.now - claim.minIntervalSeconds,
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
 * Frees the slot if `jobId` still holds it (else nothing). `backOffAt` (epoch s) also stamps
 * `lastSummaryAt`, so the room waits one interval before its next job.
 */
export async function releaseSummaryJob(projectId: string, roomId: string, jobId: string, backOffAt?: number): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomSummaryStateKey(projectId, roomId),
        UpdateExpression: backOffAt === undefined ? 'REMOVE jobQueuedAt, jobId' : 'SET lastSummaryAt = :now REMOVE jobQueuedAt, jobId',
        ConditionExpression: 'jobId = :job',
        ExpressionAttributeValues: { ':job': jobId, ...(backOffAt === undefined ? {} : { ':now': backOffAt }) },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * The summary's holder closes its job: the slot freed, `lastSummaryAt` and the last message
 * summarized moved on, and `summarizedCount` taken off `pending` (messages counted while the job
 * ran stay counted for the next one). The condition fails when another job took the slot over.
 */
export const finishSummaryJobPart = (
  projectId: string,
  roomId: string,
  jobId: string,
  done: { at: number; toMessageId: number; summarizedCount: number },
): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: roomSummaryStateKey(projectId, roomId),
    UpdateExpression: 'SET lastSummaryAt = :at, lastSummarizedMessageId = :to ADD pending :minus REMOVE jobQueuedAt, jobId',
    ConditionExpression: 'jobId = :job',
    ExpressionAttributeValues: {
      ':at': done.at,
      ':to': done.toMessageId,
      ':minus': -done.summarizedCount,
      ':job': jobId,
    },
  },
});
