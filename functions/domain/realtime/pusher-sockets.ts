import { findProjectPusherApp } from '#domain/pusher/apps';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { findCachedRoomEvent } from '#shared/db/cached-event';
import { type Connection, roomMemberInfos, socketSubscriptionIds } from '#shared/db/connection';
import { HttpError } from '#shared/errors';
import { postToConnection } from '#shared/gateway';
import { idSchema } from '#shared/ids';
import { pusherEventOf } from '#shared/pusher-frames';
import {
  type ChannelData,
  PUSHER_ACTIVITY_TIMEOUT_SECONDS,
  parseRoomChannel,
  pusherFrame,
  type RoomChannel,
  socketIdOf,
  subscriptionId,
  verifyChannelAuth,
} from '#shared/pusher-protocol';
import * as z from '#shared/schema';
import { findConnection, healPresence, membersOf, registerConnection, roomConnections } from './connections';
import { announceArrival, forgetConnections } from './presence';
import { publishRealtimeEvents } from './room-events';
import { postFirstFrame } from './welcome';

/**
 * The Pusher protocol's sockets (`/app/<key>`): one socket, many channels. The socket itself is a
 * `pusher` connection record of its project; each subscription is a room connection of its own
 * (`<connectionId>|<channel>`), so room fan-out, presence, client events and cleanup serve it as
 * they serve a native room socket, and `#shared/gateway` turns their frames into Pusher events.
 */

/** Queued by `$connect`, which cannot post to the connection it is accepting. */
export interface PusherWelcomeJob {
  readonly kind: 'pusher-welcome';
  readonly connectionId: string;
}

/** `pusher:connection_established`: the socket id clients sign subscriptions with. */
export async function welcomePusherSocket(job: PusherWelcomeJob): Promise<void> {
  await postFirstFrame(
    job.connectionId,
    pusherFrame('pusher:connection_established', {
      socket_id: socketIdOf(job.connectionId),
      activity_timeout: PUSHER_ACTIVITY_TIMEOUT_SECONDS,
    }),
  );
}

/** A refusal of `pusher:subscribe`, sent as `pusher:subscription_error` (Pusher's and Soketi's form). */
export class SubscriptionRefusal extends Error {
  constructor(
    readonly type: 'AuthError' | 'InvalidChannel' | 'NotFound',
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** `user_info` is shown to every member of the channel: kept small, like Pusher's 1 KB. */
const MAX_CHANNEL_DATA_BYTES = 1024;

const channelDataSchema = z.object({
  user_id: idSchema,
  user_info: z.optional(z.record(z.string(), z.unknown())),
});

/**
 * The subscriber named by a subscription's signed `channel_data`. The service's `/auth/channel`
 * answers one for private channels too, so every subscription has a user: one without it was not
 * signed by this service and is refused.
 */
function subscriberOf(channelData: string | undefined): ChannelData {
  if (channelData === undefined) {
    throw new SubscriptionRefusal('AuthError', 'channel_data with a user_id is required; authorize through POST /auth/channel', 401);
  }
  if (Buffer.byteLength(channelData) > MAX_CHANNEL_DATA_BYTES) {
    throw new SubscriptionRefusal('AuthError', `channel_data is limited to ${MAX_CHANNEL_DATA_BYTES} bytes`, 413);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(channelData);
  } catch {
    throw new SubscriptionRefusal('AuthError', 'channel_data is not JSON', 400);
  }
  const subscriber = channelDataSchema.safeParse(parsed);
  if (!subscriber.success) throw new SubscriptionRefusal('AuthError', 'channel_data needs a user_id of 1-128 id characters', 400);
  return subscriber.data as ChannelData;
}

/**
 * `pusher:subscribe`: checks the channel's auth against the project's app, then the room as the
 * native `$connect` does (the user may have left it since the auth was signed), stores the
 * subscription and answers `pusher_internal:subscription_succeeded` (with the presence snapshot on
 * presence channels, then the cached event or `pusher:cache_miss` on cache channels). The room
 * then hears of the arrival. Subscribing twice to one channel answers the same without a second
 * subscription.
 */
export async function subscribe(socket: Connection, request: { channel: string; auth?: string; channel_data?: string }): Promise<void> {
  const channel = parseRoomChannel(request.channel);
  if (!channel) {
    throw new SubscriptionRefusal(
      'InvalidChannel',
      'Channels are rooms: private-room-<roomId>, presence-room-<roomId>, private-cache-room-<roomId> or presence-cache-room-<roomId>',
      404,
    );
  }
  const app = await findProjectPusherApp(socket.projectId);
  const socketId = socketIdOf(socket.connectionId);
  if (!app || request.auth === undefined || !verifyChannelAuth(app, request.auth, socketId, channel.name, request.channel_data)) {
    throw new SubscriptionRefusal('AuthError', 'The subscription auth does not match this socket and channel', 401);
  }
  const subscriber = subscriberOf(request.channel_data);
  const principal: Principal = { kind: 'user', projectId: socket.projectId, userId: subscriber.user_id, roles: ['member'] };
  try {
    const { membership } = await accessRoom(principal, channel.roomId, { join: true });
    if (!membership) throw new SubscriptionRefusal('AuthError', 'Only room members may subscribe', 403);
  } catch (error) {
    if (error instanceof HttpError)
      throw new SubscriptionRefusal(error.statusCode === 404 ? 'NotFound' : 'AuthError', error.message, error.statusCode);
    throw error;
  }

  const id = subscriptionId(socket.connectionId, channel.name);
  const userInfo = channel.presence ? (subscriber.user_info ?? {}) : undefined;
  const subscription = {
    projectId: socket.projectId,
    channel: 'room' as const,
    roomId: channel.roomId,
    userId: subscriber.user_id,
    roles: ['member'],
    connectionId: id,
  };
  const existing = await findConnection(id, { consistent: true });
  const change = existing ? undefined : await registerConnection(subscription, { userInfo });
  const refs = await roomConnections(socket.projectId, channel.roomId, { consistent: true });
  await postToConnection(socket.connectionId, await subscriptionSucceeded(socket.projectId, channel, refs));
  if (channel.cache) await replayCachedEvent(socket, channel);
  if (change) await announceArrival(subscription, await healPresence(subscription, change, refs), refs, { userInfo });
}

/** `pusher_internal:subscription_succeeded`; on a presence channel with who is there and their `user_info`. */
async function subscriptionSucceeded(projectId: string, channel: RoomChannel, refs: Parameters<typeof membersOf>[0]): Promise<string> {
  if (!channel.presence) return pusherFrame('pusher_internal:subscription_succeeded', {}, channel.name);
  const ids = membersOf(refs);
  const infos = await roomMemberInfos(projectId, channel.roomId);
  const hash = Object.fromEntries(ids.map((userId) => [userId, infos.get(userId) ?? {}]));
  return pusherFrame('pusher_internal:subscription_succeeded', { presence: { ids, hash, count: ids.length } }, channel.name);
}

/** A cache channel's new subscriber gets the room's last server event, or `pusher:cache_miss` (and the `cache_miss` webhook event). */
async function replayCachedEvent(socket: Connection, channel: RoomChannel): Promise<void> {
  const cached = await findCachedRoomEvent(socket.projectId, channel.roomId);
  const frame = cached ? { ...cached, cached: true } : { type: 'cache_miss', roomId: channel.roomId };
  const event = pusherEventOf(channel.name, frame);
  if (event) await postToConnection(socket.connectionId, event);
  if (!cached) {
    await publishRealtimeEvents(socket.projectId, [
      { type: 'cache_miss', payload: { roomId: channel.roomId, at: new Date().toISOString() } },
    ]);
  }
}

/** `pusher:unsubscribe`: the subscription is forgotten and its departure announced; unknown channels are no-ops. */
export async function unsubscribe(socket: Connection, channel: string): Promise<void> {
  await forgetConnections([subscriptionId(socket.connectionId, channel)]);
}

/** The subscription a socket holds on a channel, if any: where its client events come from. */
export const findSubscription = (socket: Connection, channel: string) =>
  findConnection(subscriptionId(socket.connectionId, channel), { consistent: true });

/** A closed Pusher socket: each of its subscriptions is forgotten and announced, as a native socket's close is. */
export async function forgetSubscriptions(connectionId: string): Promise<void> {
  await forgetConnections(await socketSubscriptionIds(connectionId));
}
