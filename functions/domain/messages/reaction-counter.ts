import { storeReactionCounts } from '#shared/db/message';
import { countReactions } from '#shared/db/reaction';

export interface MessageRef {
  readonly projectId: string;
  readonly roomId: string;
  readonly messageId: number;
}

/**
 * Recounts a message's reactions from its reaction items and stores the counts on the message.
 * An event reaches the counter only after its reaction item was written (the outbox item is in
 * the same transaction, and the stream carries it after the commit), and the recount reads every
 * shard strongly consistent after that, so the stored counts include every reaction of the
 * batch: exact, and idempotent (a redelivered event recounts the same). A recount that began
 * earlier than the stored one does not overwrite it. However many reactions one batch carries,
 * a message costs `REACTION_SHARDS` Queries and one Update.
 */
export async function recountReactions(ref: MessageRef): Promise<Record<string, number>> {
  const countedAt = Date.now();
  const counts = await countReactions(ref.projectId, ref.roomId, ref.messageId);
  await storeReactionCounts(ref.projectId, ref.roomId, ref.messageId, counts, countedAt);
  return counts;
}
