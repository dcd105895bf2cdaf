import { readMessages } from '#domain/messages/history';
import { findCachedRoomEvent } from '#shared/db/cached-event';
import type { Connection } from '#shared/db/connection';
import { postToConnection } from '#shared/gateway';
import { healPresence, membersOf, type PresenceChange, roomConnections } from './connections';
import { announceArrival } from './presence';
import { publishRealtimeEvents } from './room-events';

export type ConnectionIdentity = Omit<Connection, 'connectedAt' | 'ttl'>;

/** Queued by `$connect`, which cannot post to the connection it is accepting. */
export interface WelcomeJob {
  readonly kind: 'welcome';
  readonly connection: ConnectionIdentity;
  readonly change: PresenceChange;
  /** Messages for the `history` frame; 0 skips it. */
  readonly history: number;
  /** `cache=1`: replay the room's last server event or say `cache_miss`. */
  readonly cache: boolean;
}

/**
 * The job can run before API Gateway has finished the handshake the `$connect` answer allowed, and
 * then a post gets 410 like a dead connection would. Retrying for a few seconds tells the two apart.
 */
const HANDSHAKE_RETRY_DELAYS_MS = [20, 40, 80, 160, 320, 640, 1000, 1000];

/** Posts a connection's first frame, retrying 410s until the handshake has had time to finish; `false` if it never did. */
export async function postFirstFrame(connectionId: string, frame: unknown): Promise<boolean> {
  for (const delay of [0, ...HANDSHAKE_RETRY_DELAYS_MS]) {
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    if ((await postToConnection(connectionId, frame)) === 'sent') return true;
  }
  return false;
}

/**
 * The opening frames of a connection, in order: `connected` (its socket id), then for a room
 * `subscription_succeeded` (presence snapshot), `history`, and with `cache=1` the cached event or
 * `cache_miss`. Then the room hears of the arrival. One consistent Query of the room's
 * connections serves both the snapshot and the announcement.
 */
export async function welcome(job: WelcomeJob): Promise<void> {
  const { connection } = job;
  const socketId = connection.connectionId;
  if (!connection.roomId) {
    const open = await postFirstFrame(socketId, { type: 'connected', socketId, channel: 'user', userId: connection.userId });
    if (open) await announceArrival(connection, job.change, []);
    return;
  }
  const { projectId, roomId } = connection;
  // The socket is open once this post lands. Only then is the snapshot read: a message whose live
  // post found the socket not yet open is stored before this read, so `history` carries it.
  const open = await postFirstFrame(socketId, { type: 'connected', socketId, channel: 'room', roomId, userId: connection.userId });
  if (!open) return;
  const [refs, history, cached] = await Promise.all([
    roomConnections(projectId, roomId, { consistent: true }),
    // Consistent: a message whose live post met the unfinished handshake must be in this read.
    job.history > 0 ? readMessages(projectId, roomId, { limit: job.history, consistent: true }) : undefined,
    job.cache ? findCachedRoomEvent(projectId, roomId) : undefined,
  ]);
  // Closed again before this job ran: its `$disconnect` already announced the leave, and an
  // arrival announced now would leave a ghost member.
  if (!refs.some((ref) => ref.connectionId === socketId)) return;
  await postToConnection(socketId, { type: 'subscription_succeeded', roomId, members: membersOf(refs), subscriptionCount: refs.length });
  if (history) await postToConnection(socketId, { type: 'history', roomId, messages: history.messages, hasMore: history.hasMore });
  if (job.cache) {
    await postToConnection(socketId, cached ? { ...cached, cached: true } : { type: 'cache_miss', roomId });
    if (!cached) await publishRealtimeEvents(projectId, [{ type: 'cache_miss', payload: { roomId, at: new Date().toISOString() } }]);
  }
  await announceArrival(connection, await healPresence(connection, job.change, refs), refs);
}
