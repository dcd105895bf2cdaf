import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handoffKey } from '#shared/db/ai';
import { db, tableName } from '#shared/db/client';
import { ConflictError } from '#shared/errors';

/**
 * Whether a human has taken a room over from AI (`POST /rooms/{roomId}/handoff`): the one check
 * every AI answer in a room makes before it runs. A strongly consistent read, so an agent never
 * answers after the take-over was acknowledged.
 */
export async function isHandoffActive(projectId: string, roomId: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: handoffKey(projectId, roomId), ConsistentRead: true }));
  return Item?.state === 'human_active';
}

/** `409 human_handoff_active` while a human has the room. */
export async function requireNoHandoff(projectId: string, roomId: string): Promise<void> {
  if (await isHandoffActive(projectId, roomId)) {
    throw new ConflictError('human_handoff_active', 'A human has taken over this room; AI answers resume when the handoff is completed');
  }
}
