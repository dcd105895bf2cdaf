import { createHmac } from 'node:crypto';
import { constantTimeEqual } from './constant-time';

/**
 * The Pusher Channels protocol (version 7) as this service speaks it: what pusher-js, Laravel Echo
 * and the Pusher server libraries send and expect. Pure functions only; the socket handlers
 * (`functions/ws/`), `/auth/channel` and the HTTP trigger API share them, so a channel name, a
 * socket id or a signature means the same in each.
 */

export const PUSHER_PROTOCOL_VERSION = 7;
/** Oldest protocol the endpoint accepts: pusher-js has sent 7 since 2015. */
export const PUSHER_MIN_PROTOCOL_VERSION = 5;
/** Seconds of silence after which a client pings (`pusher:connection_established`'s `activity_timeout`). */
export const PUSHER_ACTIVITY_TIMEOUT_SECONDS = 120;

/** The server libraries validate socket ids with this (pusher-http-node's `validateSocketId`). */
export const SOCKET_ID_PATTERN = /^\d{1,64}\.\d{1,64}$/;

/**
 * A Pusher socket id for a WebSocket connection id, and back. Pusher's ids are `<digits>.<digits>`
 * and the server libraries refuse any other form, while API Gateway's connection ids are base64:
 * the id's bytes read as one number, its decimal digits split in two. Reversible for any id, so
 * no item maps the one to the other.
 */
export function socketIdOf(connectionId: string): string {
  const digits = BigInt(`0x${Buffer.from(connectionId, 'utf8').toString('hex')}`).toString(10);
  const half = Math.ceil(digits.length / 2);
  return `${digits.slice(0, half)}.${digits.slice(half)}`;
}

/** The connection id behind a socket id; `undefined` for what no connection id gives. */
export function connectionIdOf(socketId: string): string | undefined {
  if (!SOCKET_ID_PATTERN.test(socketId)) return undefined;
  const [head, tail] = socketId.split('.') as [string, string];
  // `socketIdOf` puts the longer half first: any other split is not one of ours.
  if (head.length < tail.length || head.length > tail.length + 1 || head.startsWith('0')) return undefined;
  let hex = BigInt(head + tail).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  const connectionId = Buffer.from(hex, 'hex').toString('utf8');
  return socketIdOf(connectionId) === socketId ? connectionId : undefined;
}

/**
 * One subscription of a Pusher socket is stored as a room connection of its own, under this id:
 * the socket's connection id and the channel. Room fan-out, presence and cleanup then treat it as
 * any room connection, and `#shared/gateway` posts its frames to the socket, in the protocol's
 * form. Neither API Gateway's base64 ids nor channel names hold a `|`.
 */
export const SUBSCRIPTION_SEPARATOR = '|';
export const subscriptionId = (connectionId: string, channel: string) => `${connectionId}${SUBSCRIPTION_SEPARATOR}${channel}`;

export function parseSubscriptionId(id: string): { connectionId: string; channel: string } | undefined {
  const at = id.indexOf(SUBSCRIPTION_SEPARATOR);
  if (at <= 0) return undefined;
  return { connectionId: id.slice(0, at), channel: id.slice(at + 1) };
}

/** The connection a frame for `id` travels on: the socket of a subscription, or the id itself. */
export const socketOf = (id: string) => parseSubscriptionId(id)?.connectionId ?? id;

/**
 * Channels are rooms: `private-room-<roomId>` and `presence-room-<roomId>` (Laravel Echo's
 * `private('room-<id>')` and `join('room-<id>')`), and their cache forms `private-cache-room-<id>`
 * and `presence-cache-room-<id>`, which answer a new subscriber with the room's last server event.
 * Public channels carry no identity, and every room needs one, so there are none.
 */
const ROOM_CHANNEL = /^(private|presence)-(cache-)?room-([A-Za-z0-9_.:@-]{1,128})$/;

export interface RoomChannel {
  readonly name: string;
  readonly roomId: string;
  readonly presence: boolean;
  readonly cache: boolean;
}

export function parseRoomChannel(name: string): RoomChannel | undefined {
  const match = ROOM_CHANNEL.exec(name);
  if (!match) return undefined;
  return { name, roomId: match[3] as string, presence: match[1] === 'presence', cache: match[2] !== undefined };
}

/** Pusher's channel names: at most 200 of these characters (our room channels are a subset, plus `:`). */
export const CHANNEL_NAME_PATTERN = /^[A-Za-z0-9_\-=@,.;:]{1,200}$/;

/** The string a subscription's `auth` signs: `socket_id:channel_name`, then `:channel_data` when there is one. */
const channelAuthString = (socketId: string, channel: string, channelData?: string) =>
  channelData === undefined ? `${socketId}:${channel}` : `${socketId}:${channel}:${channelData}`;

/** `<key>:<hex HMAC-SHA256>`, the `auth` of `pusher:subscribe`. */
export function channelAuth(app: { key: string; secret: string }, socketId: string, channel: string, channelData?: string): string {
  const signature = createHmac('sha256', app.secret)
    .update(channelAuthString(socketId, channel, channelData))
    .digest('hex');
  return `${app.key}:${signature}`;
}

/** Constant-time check of a subscription's `auth` against the app's key and secret. */
export function verifyChannelAuth(
  app: { key: string; secret: string },
  auth: string,
  socketId: string,
  channel: string,
  channelData?: string,
): boolean {
  return constantTimeEqual(auth, channelAuth(app, socketId, channel, channelData));
}

/**
 * `channel_data` of a presence subscription: who the socket is in the channel. The same form rides
 * along on private channels (pusher-js sends whatever the auth endpoint answered), so every
 * subscription knows its user.
 */
export interface ChannelData {
  readonly user_id: string;
  readonly user_info?: Record<string, unknown>;
}

/** A frame in the protocol's form: `data` is a JSON string, as Pusher sends it. */
export function pusherFrame(event: string, data: unknown, channel?: string): string {
  return JSON.stringify({
    event,
    ...(channel !== undefined ? { channel } : {}),
    data: typeof data === 'string' ? data : JSON.stringify(data),
  });
}

/**
 * `pusher:error` codes of protocol 7 that this endpoint sends (Soketi's choices where the protocol
 * leaves one open). 4000-4099: the client must not reconnect; 4100-4199: reconnect after a
 * back-off; 4200-4299: reconnect at once; 4300+: the frame is refused, the socket stays.
 */
export const PUSHER_ERRORS = {
  /** A frame that is not JSON, or not of the protocol's shape: the socket is closed, the client reconnects. */
  invalidMessage: 4200,
  /** A subscription whose auth does not verify, or to a room the user may not join. */
  unauthorized: 4009,
  /** A client event refused: a public or unjoined channel, too large, or over its rate limit. */
  clientEventRejected: 4301,
  /** The server failed while handling the frame. */
  serverError: 4302,
} as const;
