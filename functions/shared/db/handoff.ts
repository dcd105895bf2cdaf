import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActor } from './erased-actor';
import { HANDOFF_STATES } from './handoff-states';
import { roomPk } from './keys';
import type { TransactPart } from './transact';

/**
 * A room's handoff, one item per room holding the current (or last) one: its `state` decides
 * whether AI may answer in the room. Each transition is conditional on the state it leaves, so of
 * two concurrent take-overs (or completions) one wins.
 */
export const handoffKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'HANDOFF' });

/** `ai`: the provider summarized the context; `excerpt`: AI is off or failed, so the messages themselves are the context. */
export const CONTEXT_SOURCES = ['ai', 'excerpt'] as const;
export type ContextSource = (typeof CONTEXT_SOURCES)[number];

export const handoffItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  handoffId: z.string(),
  state: z.enum(HANDOFF_STATES),
  agent_task_id: z.string(),
  agentId: z.nullable(z.string()),
  note: z.nullable(z.string()),
  takenBy: z.string(),
  takenAt: z.string(),
  contextSummary: z.string(),
  contextSource: z.enum(CONTEXT_SOURCES),
  completedAt: z.nullable(z.string()),
  completedBy: z.nullable(z.string()),
  disposition: z.nullable(z.string()),
  completionNote: z.nullable(z.string()),
});
export type HandoffItem = z.infer<typeof handoffItem>;

/** The item of a handoff, keyed by its project and room. */
export const handoffItemFor = <T extends Omit<HandoffItem, 'pk' | 'sk'>>(handoff: T): T & Pick<HandoffItem, 'pk' | 'sk'> => ({
  ...handoffKey(handoff.projectId, handoff.roomId),
  ...handoff,
});

/** The room's handoff (a strongly consistent read: an agent never answers after a take-over was acknowledged). */
export async function findHandoff(projectId: string, roomId: string): Promise<HandoffItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: handoffKey(projectId, roomId), ConsistentRead: true }));
  return Item ? handoffItem.parse(Item) : undefined;
}

/** Puts a new `human_active` handoff over the room's last one; the condition fails while a handoff is active. */
export const takeOverPart = (item: HandoffItem & { state: 'human_active' }): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: item,
    ConditionExpression: 'attribute_not_exists(pk) OR #state <> :active',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':active': 'human_active' },
  },
});

export interface HandoffCompletion {
  readonly completedAt: string;
  readonly completedBy: string;
  readonly disposition: string;
  readonly completionNote: string | null;
}

/**
 * Completes handoff `handoffId`; the condition fails unless it is still the room's active one (a
 * concurrent completion, or a new take-over, wins).
 */
export const completeHandoffPart = (projectId: string, roomId: string, handoffId: string, completion: HandoffCompletion): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: handoffKey(projectId, roomId),
    UpdateExpression: 'SET #state = :completed, completedAt = :at, completedBy = :by, disposition = :disposition, completionNote = :note',
    ConditionExpression: '#state = :active AND handoffId = :handoffId',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':completed': 'completed',
      ':active': 'human_active',
      ':handoffId': handoffId,
      ':at': completion.completedAt,
      ':by': completion.completedBy,
      ':disposition': completion.disposition,
      ':note': completion.completionNote,
    },
  },
});

/** The handoff's taker and completer, where they are `userId`, become the erased user. */
export const forgetHandoffActor = (item: HandoffItem, userId: string) =>
  replaceActor(handoffKey(item.projectId, item.roomId), item, ['takenBy', 'completedBy'], userId);
