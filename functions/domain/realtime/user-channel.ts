import { dropConnection, userConnections } from './connections';
import { postFrames } from './fan-out';

/**
 * Sends a frame to the user-channel connections of some users. Connections found gone are
 * forgotten (a user channel has no room presence to announce).
 */
export async function sendToUserChannels(projectId: string, userIds: readonly string[], frame: unknown): Promise<number> {
  const refs = (await Promise.all(userIds.map((userId) => userConnections(projectId, userId, 'user')))).flat();
  const outcome = await postFrames(
    refs.map((ref) => ref.connectionId),
    frame,
  );
  await Promise.all(outcome.gone.map((id) => dropConnection(id, { onlyIfPastHandshake: true })));
  return outcome.sent;
}
