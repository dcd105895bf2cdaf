import { closeConnection } from '#shared/gateway';
import { dropConnection, userConnections } from './connections';
import { announceDepartures, type Departure } from './presence';

/** Closes a user's connections to one room (a removed member stops receiving it at once). */
export async function disconnectFromRoom(projectId: string, roomId: string, userId: string): Promise<number> {
  const own = (await userConnections(projectId, userId, 'room')).filter((ref) => ref.roomId === roomId);
  const drops = await Promise.all(
    own.map(async (ref) => {
      await closeConnection(ref.connectionId);
      return dropConnection(ref.connectionId);
    }),
  );
  await announceDepartures(drops.filter((drop): drop is Departure => drop !== undefined));
  return own.length;
}
