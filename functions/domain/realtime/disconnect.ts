import type { ConnectionRef } from '#shared/db/connection';
import { closeConnection } from '#shared/gateway';
import { dropConnection, userConnections } from './connections';
import { announceDepartures, type Departure } from './presence';

/**
 * Closes connections through the management API and forgets them at once, announcing the
 * departures; the `$disconnect` that follows finds nothing left to do.
 */
export async function closeConnections(refs: readonly ConnectionRef[]): Promise<number> {
  const drops = await Promise.all(
    refs.map(async (ref) => {
      await closeConnection(ref.connectionId);
      return dropConnection(ref.connectionId);
    }),
  );
  await announceDepartures(drops.filter((drop): drop is Departure => drop !== undefined));
  return refs.length;
}

/** Closes a user's connections to one room (a removed member stops receiving it at once). */
export async function disconnectFromRoom(projectId: string, roomId: string, userId: string): Promise<number> {
  const own = (await userConnections(projectId, userId, 'room')).filter((ref) => ref.roomId === roomId);
  return closeConnections(own);
}
