import { askAi, bulletLines, conversation, isAiConfigured } from '#domain/ai/assistant';
import { QuotaExceededError, requireQuota } from '#domain/ai/quota';
import { newEvent, outboxPut } from '#domain/events/outbox';
import { readMessages } from '#domain/messages/history';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { config } from '#shared/config';
import { findRoom } from '#shared/db/room';
import { latestRoomSummaries, putRoomSummaryPart, type RoomSummaryItem } from '#shared/db/room-summary';
import {
  addPendingMessages,
  claimSummaryJob,
  finishSummaryJobPart,
  readRoomSummaryState,
  releaseSummaryJob,
} from '#shared/db/room-summary-state';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
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
  /** The claim the job holds: a job whose claim another job has taken over ends without work. */
  readonly jobId: string;
}

/** Counts `count` new messages in a room and queues its summary job when the thresholds pass. */
export async function countRoomMessages(projectId: string, roomId: string, count: number): Promise<boolean> {
  if (!isAiConfigured()) return false;
  const now = Math.floor(Date.now() / 1000);
  const { pending, lastSummaryAt } = await addPendingMessages(projectId, roomId, count);
  if (pending < config.ROOM_SUMMARY_MIN_MESSAGES || now - lastSummaryAt < config.ROOM_SUMMARY_MIN_INTERVAL_SECONDS) return false;
  // A project out of quota queues nothing until its quota allows (the total is cached per instance).
  if (!(await withinQuota(projectId))) return false;
  const jobId = newId('job');
  const claimed = await claimSummaryJob(projectId, roomId, {
    jobId,
    now,
    staleAfterSeconds: STALE_JOB_SECONDS,
    minMessages: config.ROOM_SUMMARY_MIN_MESSAGES,
    minIntervalSeconds: config.ROOM_SUMMARY_MIN_INTERVAL_SECONDS,
  });
  if (!claimed) return false;
  try {
    await sendRoomSummaryJob({ kind: 'room_summary', projectId, roomId, jobId });
  } catch (error) {
    // Not queued: the claim goes, so the retried batch (or the next one) can claim again.
    await releaseClaim(projectId, roomId, jobId);
    throw error;
  }
  return true;
}

/** Frees the room's job slot if `jobId` still holds it; `backOff` makes the room wait one interval before its next job. */
async function releaseClaim(projectId: string, roomId: string, jobId: string, extra: { backOff?: boolean } = {}): Promise<void> {
  await releaseSummaryJob(projectId, roomId, jobId, extra.backOff ? Math.floor(Date.now() / 1000) : undefined);
}

async function withinQuota(projectId: string): Promise<boolean> {
  try {
    await requireQuota(projectId);
    return true;
  } catch (error) {
    if (error instanceof QuotaExceededError) return false;
    throw error;
  }
}

/**
 * The summarizer's half: the room's newest messages since the last summary, summarized and
 * announced, by the job that holds the room's claim only (a redelivered or superseded job ends
 * without work). A failing provider keeps the claim and the queue retries the job; a project out
 * of quota, or an encrypted room, backs off one interval instead of retrying.
 */
export async function summarizeRoom(job: RoomSummaryJob): Promise<RoomSummaryItem | undefined> {
  const { projectId, roomId, jobId } = job;
  const state = await readRoomSummaryState(projectId, roomId);
  if (state.jobId !== jobId) return undefined;
  const room = await findRoom(projectId, roomId);
  if (!room || room.e2eEnabled) {
    // Deleted, or ciphertext to the service: nothing a provider may read.
    await releaseClaim(projectId, roomId, jobId, { backOff: true });
    return undefined;
  }
  const counted = state.pending;
  const since = state.lastSummarizedMessageId;
  const { messages } = await readMessages(projectId, roomId, { limit: config.ROOM_SUMMARY_MAX_MESSAGES });
  const fresh = messages.filter((message) => message.id > since);
  if (fresh.length === 0) {
    await releaseClaim(projectId, roomId, jobId);
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
    if (error instanceof QuotaExceededError) {
      await releaseClaim(projectId, roomId, jobId, { backOff: true });
      return undefined;
    }
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
  try {
    await transactWrite([
      putRoomSummaryPart(projectId, item),
      // Messages counted while this job ran stay counted for the next one; only the claim's holder writes.
      finishSummaryJobPart(projectId, roomId, jobId, {
        at: Math.floor(Date.now() / 1000),
        toMessageId: item.toMessageId,
        summarizedCount: counted,
      }),
      outboxPut(newEvent('room.summary', projectId, payload)),
    ]);
  } catch (error) {
    // Another job took the claim over (this one ran past the stale limit): its summary stands.
    if (isConditionFailure(error)) return undefined;
    throw error;
  }

  return item;
}

export async function listRoomSummaries(principal: Principal, roomId: string, limit: number) {
  await accessRoom(principal, roomId, { join: false });
  return (await latestRoomSummaries(principal.projectId, roomId, limit)).map(({ model: _model, ...summary }) => summary);
}
