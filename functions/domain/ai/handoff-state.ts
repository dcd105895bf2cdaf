import { findHandoff } from '#shared/db/handoff';
import { ConflictError } from '#shared/errors';

/**
 * Whether a human has taken a room over from AI (`POST /rooms/{roomId}/handoff`): the one check
 * every AI answer in a room makes before it runs. A strongly consistent read, so an agent never
 * answers after the take-over was acknowledged.
 */
export async function isHandoffActive(projectId: string, roomId: string): Promise<boolean> {
  return (await findHandoff(projectId, roomId))?.state === 'human_active';
}

/** `409 human_handoff_active` while a human has the room. */
export async function requireNoHandoff(projectId: string, roomId: string): Promise<void> {
  if (await isHandoffActive(projectId, roomId)) {
    throw new ConflictError('human_handoff_active', 'A human has taken over this room; AI answers resume when the handoff is completed');
  }
}
