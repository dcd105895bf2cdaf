import * as z from '#shared/schema';
import { projectPk, roomPk } from './keys';

/**
 * Items of the AI area: the monthly quota counter, room summaries and their scheduling state,
 * agents, room handoffs, agent tasks and disposition codes. docs/data-model.md ("AI") has the
 * access patterns.
 */

/**
 * The monthly AI call counter, spread over shards so a busy project does not write one hot item:
 * each call adds to a random shard; the month's total is one Query of the partition. A new month is
 * a new partition, so nothing has to be reset; TTL sweeps old months.
 */
export const QUOTA_SHARDS = 10;
export const quotaMonthPk = (projectId: string, month: string) => `${projectPk(projectId)}#AIQ#${month}`;
export const quotaShardKey = (projectId: string, month: string, shard: number) => ({
  pk: quotaMonthPk(projectId, month),
  sk: `S#${shard}`,
});
/** `2026-11`: calendar months in UTC. */
export const monthOf = (date: Date) => date.toISOString().slice(0, 7);

/** A project's own monthly quota, beside the project item (set by the operator). */
export const projectAiQuotaKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'AIQUOTA' });

/** A room's automatic summaries, newest last by sort key. */
export const roomSummariesPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#SUMMARIES`;
export const roomSummaryKey = (projectId: string, roomId: string, createdAt: string, summaryId: string) => ({
  pk: roomSummariesPk(projectId, roomId),
  sk: `S#${createdAt}#${summaryId}`,
});
/** Messages counted since the last summary, when it was made, and whether a job is queued. */
export const roomSummaryStateKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'SUMMARY_STATE' });

export const roomSummaryItem = z.object({
  summaryId: z.string(),
  roomId: z.string(),
  summary: z.string(),
  messageCount: z.number().check(z.int()),
  fromMessageId: z.number().check(z.int()),
  toMessageId: z.number().check(z.int()),
  model: z.string(),
  createdAt: z.string(),
});
export type RoomSummaryItem = z.infer<typeof roomSummaryItem>;

/** Agents of a project in one partition: the mention subscriber reads them all with one (cached) Query. */
export const agentsPk = (projectId: string) => `${projectPk(projectId)}#AGENTS`;
export const agentKey = (projectId: string, agentId: string) => ({ pk: agentsPk(projectId), sk: `A#${agentId}` });

/** The room's handoff, one item per room: its state decides whether AI may answer there. */
export const handoffKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'HANDOFF' });
export const HANDOFF_STATES = ['human_active', 'completed'] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];

/** An agent task; gsi1 lists a project's tasks by status, newest first. */
export const agentTaskKey = (projectId: string, taskId: string) => ({ pk: `${projectPk(projectId)}#TASK#${taskId}`, sk: 'TASK' });
export const agentTasksIndexKey = (projectId: string, status: string) => `${projectPk(projectId)}#TASKS#${status}`;

/** The project's own disposition codes (the defaults live in code). */
export const dispositionsKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'DISPOSITIONS' });
