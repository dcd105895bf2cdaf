import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { askAi, bulletLines, conversation, isAiConfigured } from '#domain/ai/assistant';
import { newEvent, outboxPut } from '#domain/events/outbox';
import { readMessages } from '#domain/messages/history';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { config } from '#shared/config';
import { type RoomSummaryItem, roomSummariesPk, roomSummaryItem, roomSummaryKey, roomSummaryStateKey } from '#shared/db/ai';
import { db, isConditionFailure, tableName } from '#shared/db/client';
import { newId } from '#shared/ids';
import { sendRoomSummaryJob } from '#shared/queue';

/**
 * Automatic room summaries. Every stored message adds to its room's count (one write per room per
 * event batch, off the sender's path); once `ROOM_SUMMARY_MIN_MESSAGES` arrived and
 * `ROOM_SUMMARY_MIN_INTERVAL_SECONDS` passed since the last summary, the batch that sees it claims
 * the room's job slot with a conditional write and queues one job, so a burst of a thousand
 * messages queues one job, not a thousand. The summarizer writes the summary, its `room.summary`
 * event and the room's new state in one transaction.
 */

/** A claimed job slot older than this is taken as lost (the job died in its queue) and may be claimed again. */
const STALE_JOB_SECONDS = 15 * 60;

export interface RoomSummaryJob {
  readonly kind: 'room_summary';
  readonly projectId: string;
  readonly roomId: string;
}

/** Counts `count` new messages in a room and queues its summary job when the thresholds pass. */
export async function countRoomMessages(projectId: string, roomId: string, count: number): Promise<boolean> {
  if (!isAiConfigured()) return false;
  const now = Math.floor(Date.now() / 1000);
  const { Attributes = {} } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: roomSummaryStateKey(projectId, roomId),
      UpdateExpression: 'ADD pending :count',
      ExpressionAttributeValues: { ':count': count },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const pending = Number(Attributes.pending ?? 0);
  const lastSummaryAt = Number(Attributes.lastSummaryAt ?? 0);
  if (pending < config.ROOM_SUMMARY_MIN_MESSAGES || now - lastSummaryAt < config.ROOM_SUMMARY_MIN_INTERVAL_SECONDS) return false;
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomSummaryStateKey(projectId, roomId),
        UpdateExpression: 'SET jobQueuedAt = :now',
        // The thresholds again, inside the claim: a job that finished since the count was read
        // has moved lastSummaryAt and pending on, and must not be followed by a second one at once.
        ConditionExpression:
          '(attribute_not_exists(jobQueuedAt) OR jobQueuedAt < :stale) AND pending >= :min ' +
          'AND (attribute_not_exists(lastSummaryAt) OR lastSummaryAt <= :intervalAgo)',
        ExpressionAttributeValues: {
          ':now': now,
          ':stale': now - STALE_JOB_SECONDS,
          ':min': config.ROOM_SUMMARY_MIN_MESSAGES,
          ':intervalAgo': now - config.ROOM_SUMMARY_MIN_INTERVAL_SECONDS,
        },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
  await sendRoomSummaryJob({ kind: 'room_summary', projectId, roomId });
  return true;
}

/** The summarizer's half: the room's newest messages since the last summary, summarized and announced. */
export async function summarizeRoom(job: RoomSummaryJob): Promise<RoomSummaryItem | undefined> {
  const { projectId, roomId } = job;
  const key = roomSummaryStateKey(projectId, roomId);
  const { Item: state = {} } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  const counted = Number(state.pending ?? 0);
  const since = Number(state.lastSummarizedMessageId ?? 0);
  const { messages } = await readMessages(projectId, roomId, { limit: config.ROOM_SUMMARY_MAX_MESSAGES });
  const fresh = messages.filter((message) => message.id > since);
  const release = () => db.send(new UpdateCommand({ TableName: tableName, Key: key, UpdateExpression: 'REMOVE jobQueuedAt' }));
  if (fresh.length === 0) {
    await release();
    return undefined;
  }
  let answer: Awaited<ReturnType<typeof askAi>>;
  try {
    answer = await askAi(projectId, 'room_summary', [
      {
        role: 'system',
        content: 'You summarize chat rooms for people catching up. Answer with 3 to 8 short bullet lines starting with "- ".',
      },
      { role: 'user', content: `Messages since the last summary (oldest first):\n${conversation(fresh)}` },
    ]);
  } catch (error) {
    // The slot is freed so the next message can queue a new job; the queue retries a failed provider.
    await release();
    throw error;
  }
  const createdAt = new Date().toISOString();
  const item: RoomSummaryItem = {
    summaryId: newId('sum'),
    roomId,
    summary: bulletLines(answer.content),
    messageCount: fresh.length,
    fromMessageId: (fresh[0] as { id: number }).id,
    toMessageId: (fresh.at(-1) as { id: number }).id,
    model: answer.model,
    createdAt,
  };
  const { model: _model, ...payload } = item;
  await db.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: tableName, Item: { ...roomSummaryKey(projectId, roomId, createdAt, item.summaryId), ...item } } },
        {
          Update: {
            TableName: tableName,
            Key: key,
            // Messages counted while this job ran stay counted for the next one.
            UpdateExpression: 'SET lastSummaryAt = :at, lastSummarizedMessageId = :to ADD pending :minus REMOVE jobQueuedAt',
            ExpressionAttributeValues: { ':at': Math.floor(Date.now() / 1000), ':to': item.toMessageId, ':minus': -counted },
          },
        },
        outboxPut(newEvent('room.summary', projectId, payload)),
      ],
    }),
  );
  return item;
}

export async function listRoomSummaries(principal: Principal, roomId: string, limit: number) {
  await accessRoom(principal, roomId, { join: false });
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': roomSummariesPk(principal.projectId, roomId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => {
    const { model: _model, ...summary } = roomSummaryItem.parse(raw);
    return summary;
  });
}
