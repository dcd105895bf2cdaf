import { createHash } from 'node:crypto';
import * as z from '#shared/schema';
import { deleteAll } from './batch';
import { tableName } from './client';
import { messageSk, roomMessagesPk, userPk } from './keys';
import { queryAll } from './query';
import type { TransactPart } from './transact';

/**
 * One user's reaction with one emoji to one message: the source of truth of every count. A
 * reaction request writes (or deletes) this item alone, conditionally, and never touches the
 * message item, so a storm on one message makes no hot item: the items of one message are spread
 * over {@link REACTION_SHARDS} partitions by user, and the counts on the message are recounted
 * from them off the request path (`functions/domain/messages/reaction-counter.ts`).
 */
export const reactionItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  emoji: z.string(),
  userId: z.string(),
  createdAt: z.string(),
});
export type ReactionItem = z.infer<typeof reactionItem>;

/**
 * Partitions the reactions of one message are spread over: at 1,000 reactions a second on one
 * message each takes about 125 transactional writes a second (250 WCU), well under a partition's
 * 1,000 WCU, and a recount is this many Queries.
 */
export const REACTION_SHARDS = 8;

const shardOf = (userId: string) => (createHash('sha256').update(userId).digest()[0] as number) % REACTION_SHARDS;
const reactionShardPk = (projectId: string, roomId: string, messageId: number, shard: number) =>
  `${roomMessagesPk(projectId, roomId)}#REACT#${messageId}#${shard}`;

export const reactionKey = (projectId: string, roomId: string, messageId: number, emoji: string, userId: string) => ({
  pk: reactionShardPk(projectId, roomId, messageId, shardOf(userId)),
  sk: `E#${emoji}#U#${userId}`,
});

/** The user's reactions across the project (gsi2), for the GDPR export and erasure. */
export const userReactionsPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#REACTIONS`;

/** The reaction's write, as a transaction part: `ConditionalCheckFailed` when the user has this reaction already. */
export function newReactionPart(item: Omit<ReactionItem, 'pk' | 'sk'>): TransactPart {
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...reactionKey(item.projectId, item.roomId, item.messageId, item.emoji, item.userId),
        ...item,
        gsi2pk: userReactionsPk(item.projectId, item.userId),
        gsi2sk: `${item.roomId}#${messageSk(item.messageId)}#${item.emoji}`,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** The reaction's removal, as a transaction part: `ConditionalCheckFailed` when the user has no such reaction. */
export const removeReactionPart = (projectId: string, roomId: string, messageId: number, emoji: string, userId: string): TransactPart => ({
  Delete: {
    TableName: tableName,
    Key: reactionKey(projectId, roomId, messageId, emoji, userId),
    ConditionExpression: 'attribute_exists(pk)',
  },
});

/**
 * The message's reactions counted by emoji: one strongly consistent Query per shard (in
 * parallel), reading only the sort keys, so every reaction written before the call is counted.
 */
export async function countReactions(projectId: string, roomId: string, messageId: number): Promise<Record<string, number>> {
  const shards = await Promise.all(
    Array.from({ length: REACTION_SHARDS }, (_, shard) =>
      queryAll({
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': reactionShardPk(projectId, roomId, messageId, shard) },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
      }),
    ),
  );
  const counts: Record<string, number> = {};
  for (const item of shards.flat()) {
    const emoji = String(item.sk).slice(2, String(item.sk).lastIndexOf('#U#'));
    counts[emoji] = (counts[emoji] ?? 0) + 1;
  }
  return counts;
}

/** Every reaction of the user in the project (gsi2). */
export async function reactionsOfUser(projectId: string, userId: string): Promise<ReactionItem[]> {
  const items = await queryAll({
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': userReactionsPk(projectId, userId) },
  });
  return items.map((raw) => reactionItem.parse(raw));
}

/** Deletes the given reactions (the GDPR erasure); their messages need a recount afterwards. */
export async function deleteReactions(items: readonly ReactionItem[]): Promise<void> {
  await deleteAll(items.map((item) => ({ pk: item.pk, sk: item.sk })));
}
