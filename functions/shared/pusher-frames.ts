import { parseRoomChannel, pusherFrame } from './pusher-protocol';

/**
 * A room frame of the native protocol as a Pusher subscriber of `channel` receives it, or
 * `undefined` when the protocol has no counterpart (the native opening frames, presence lists
 * Pusher clients keep themselves, member changes on a private channel). Fan-out, presence and
 * server events build native frames once; `#shared/gateway` translates each for the Pusher
 * subscriptions among its targets, so every path that reaches a room reaches them too.
 *
 * | native `type` | Pusher event |
 * |---|---|
 * | `message` | `message`, data: the stored message |
 * | `event` (server `POST /events`, `client-*`) | its own name, data: its data (client events on presence channels add `user_id`) |
 * | `member_joined` / `member_left` (presence channels) | `pusher_internal:member_added` / `member_removed` |
 * | `subscription_count` (private channels) | `pusher_internal:subscription_count` |
 * | `cache_miss` | `pusher:cache_miss` |
 * | `connected`, `subscription_succeeded`, `presence`, `history` | none: the subscribe answers them |
 * | any other (`message_updated`, `handoff`, ...) | its type, data: the frame without `type` and `roomId` |
 */
export function pusherEventOf(channel: string, frame: unknown): string | undefined {
  if (typeof frame !== 'object' || frame === null) return undefined;
  const { type, roomId: _roomId, ...rest } = frame as Record<string, unknown>;
  const presence = parseRoomChannel(channel)?.presence ?? false;
  switch (type) {
    case 'message':
      return pusherFrame('message', rest.message, channel);
    case 'event': {
      const event = String(rest.event);
      const userId = presence && event.startsWith('client-') && typeof rest.userId === 'string' ? { user_id: rest.userId } : {};
      return JSON.stringify({ event, channel, data: JSON.stringify(rest.data ?? {}), ...userId });
    }
    case 'member_joined':
      return presence
        ? pusherFrame('pusher_internal:member_added', { user_id: rest.userId, user_info: rest.userInfo ?? {} }, channel)
        : undefined;
    case 'member_left':
      return presence ? pusherFrame('pusher_internal:member_removed', { user_id: rest.userId }, channel) : undefined;
    case 'subscription_count':
      return presence
        ? undefined
        : pusherFrame('pusher_internal:subscription_count', { subscription_count: rest.subscriptionCount }, channel);
    case 'cache_miss':
      return JSON.stringify({ event: 'pusher:cache_miss', channel });
    case 'connected':
    case 'subscription_succeeded':
    case 'presence':
    case 'history':
      return undefined;
    default:
      return typeof type === 'string' ? pusherFrame(type, rest, channel) : undefined;
  }
}
