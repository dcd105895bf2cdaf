import { accessRoom } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { BadRequestError, ForbiddenError } from '#shared/errors';
import { type ChannelData, channelAuth, parseRoomChannel, type RoomChannel, SOCKET_ID_PATTERN } from '#shared/pusher-protocol';
import { requireProjectPusherApp } from './apps';

/** A room channel's name, or 400 `invalid_channel_name` saying which names are rooms. */
export function roomChannelOf(name: string, field: string): RoomChannel {
  const channel = parseRoomChannel(name);
  if (!channel) {
    throw new BadRequestError(
      `${field} must name a room: private-room-<roomId>, presence-room-<roomId>, private-cache-room-<roomId> or presence-cache-room-<roomId>`,
      [{ field, message: 'is not a room channel' }],
      'invalid_channel_name',
    );
  }
  return channel;
}

export function requireSocketId(socketId: string, field: string): void {
  if (!SOCKET_ID_PATTERN.test(socketId)) {
    throw new BadRequestError(
      `${field} must be a Pusher socket id (<digits>.<digits>)`,
      [{ field, message: 'is not a socket id' }],
      'invalid_socket_id',
    );
  }
}

/**
 * `POST /auth/channel`: the signature a Pusher client subscribes with, for a room the caller is a
 * member of. `channel_data` names the caller on private channels too (pusher-js sends it along
 * with the subscription whatever the channel), so the socket side learns the user of every
 * subscription from what the service signed. A public room is joined, as on a native socket; a
 * project admin who is not a member is refused, as on a native socket.
 */
export async function authorizeChannel(
  user: UserPrincipal,
  input: { socketId: string; channelName: string; presenceInfo?: Record<string, unknown> },
): Promise<{ auth: string; channel_data: string }> {
  requireSocketId(input.socketId, 'body.socket_id');
  const channel = roomChannelOf(input.channelName, 'body.channel_name');
  const app = await requireProjectPusherApp(user.projectId);
  const { membership } = await accessRoom(user, channel.roomId, { join: true });
  if (!membership) throw new ForbiddenError('Only room members may subscribe to its channels', 'not_a_member');
  const data: ChannelData = { user_id: user.userId, user_info: input.presenceInfo ?? {} };
  const channelData = JSON.stringify(data);
  return { auth: channelAuth(app, input.socketId, channel.name, channelData), channel_data: channelData };
}
