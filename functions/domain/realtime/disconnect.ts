import type { ConnectionRef } from '#shared/db/connection';
import { closeConnection } from '#shared/gateway';
import { userConnections } from './connections';
import { forgetConnections } from './presence';

/**
 * Closes connections through the management API and forgets them at once, announcing the
 * departures; the `$disconnect` that follows finds nothing left to do.
 */
export async function closeConnections(refs: readonly ConnectionRef[]): Promise<number> {
  const ids = refs.map((ref) => ref.connectionId);
  await Promise.all(ids.map((id) => closeConnection(id)));
  await forgetConnections(ids);
  return refs.length;
}

/** Closes a user's connections to one room (a removed member stops receiving it at once). */
export async function disconnectFromRoom(projectId: string, roomId: string, userId: string): Promise<number> {
  const own = (await userConnections(projectId, userId, 'room')).filter((ref) => ref.roomId === roomId);
  return closeConnections(own);
}
