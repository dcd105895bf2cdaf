import WebSocket from 'ws';
import { type Frame, type Handshake, type RoomSocket, tryOpen } from '../../lib/room-socket';
import { runtime } from './api';

export { type CloseInfo, type Frame, type Handshake, RoomSocket, tryOpen } from '../../lib/room-socket';

/** Query options of a connection: `history=<n>`, `cache=1`, and the gateway to use (a spawned runtime's). */
export interface SocketOptions {
  /** `history` query value; numbers and raw strings (for validation tests) are sent as given. */
  readonly history?: number | string;
  /** `true` sends `cache=1`; a string is sent as given. */
  readonly cache?: boolean | string;
  /** `ws://host:port` of the gateway. @default the shared runtime's */
  readonly wsUrl?: string;
  /** The upgrade's `Origin` header, as a browser on that site sends it. @default none */
  readonly origin?: string;
}

function socketUrl(path: string, token: string | undefined, options: SocketOptions): string {
  const query = new URLSearchParams();
  if (token !== undefined) query.set('token', token);
  if (options.history !== undefined) query.set('history', String(options.history));
  if (options.cache !== undefined) query.set('cache', options.cache === true ? '1' : options.cache === false ? '0' : options.cache);
  const search = query.toString();
  return `${options.wsUrl ?? runtime().wsUrl}${path}${search ? `?${search}` : ''}`;
}

export const roomSocketUrl = (roomId: string, token?: string, options: SocketOptions = {}) =>
  socketUrl(`/ws/rooms/${encodeURIComponent(roomId)}`, token, options);

/** `/ws/user/<userId>`: the user channel (notifications, watchlist events). */
export const userSocketUrl = (userId: string, token?: string, options: SocketOptions = {}) =>
  socketUrl(`/ws/user/${encodeURIComponent(userId)}`, token, options);

/** Opens a WebSocket to a room; resolves with the refusal instead of throwing when the upgrade is refused. */
export const tryConnect = (roomId: string, token?: string, options: SocketOptions = {}): Promise<Handshake> =>
  tryOpen(roomSocketUrl(roomId, token, options), options);

/** Opens a user-channel WebSocket; resolves with the refusal instead of throwing when the upgrade is refused. */
export const tryConnectUser = (userId: string, token?: string, options: SocketOptions = {}): Promise<Handshake> =>
  tryOpen(userSocketUrl(userId, token, options), options);

async function opened(handshake: Promise<Handshake>): Promise<RoomSocket> {
  const result = await handshake;
  if (!result.open) throw new Error(`WebSocket refused: ${result.status} ${JSON.stringify(result.body)}`);
  return result.socket;
}

/** Opens a WebSocket to a room and fails the test when the handshake is refused. */
export const connect = (roomId: string, token: string, options: SocketOptions = {}): Promise<RoomSocket> =>
  opened(tryConnect(roomId, token, options));

/** Opens a user-channel WebSocket and waits for its `connected` frame. */
export async function connectUser(userId: string, token: string, options: SocketOptions = {}): Promise<RoomSocket> {
  const socket = await opened(tryConnectUser(userId, token, options));
  await socket.socketId();
  return socket;
}

/** The last opening frame a room connection with these options gets. */
export function isLastOpeningFrame(options: SocketOptions = {}): (frame: Frame) => boolean {
  if (options.cache === true || options.cache === '1' || options.cache === 'true') {
    return (frame) => frame.type === 'cache_miss' || frame.cached === true;
  }
  if (options.history === 0 || options.history === '0') return (frame) => frame.type === 'subscription_succeeded';
  return (frame) => frame.type === 'history';
}

/**
 * Opens a WebSocket to a room and waits for all its opening frames (`connected`,
 * `subscription_succeeded`, `history` unless `history=0`, and with `cache=1` the cache frame).
 */
export async function connectWelcomed(roomId: string, token: string, options: SocketOptions = {}): Promise<RoomSocket> {
  const socket = await connect(roomId, token, options);
  await socket.next(isLastOpeningFrame(options));
  return socket;
}

/** The `ws` class for the SDK's `WebSocket` option, recording each socket's URL and the frames it received. */
export function recordingWebSocket() {
  const sockets: { url: URL; frames: Record<string, any>[] }[] = [];
  class Recording extends WebSocket {
    constructor(url: string) {
      super(url);
      const record = { url: new URL(url), frames: [] as Record<string, any>[] };
      sockets.push(record);
      this.on('message', (data) => record.frames.push(JSON.parse(String(data))));
    }
  }
  return { WebSocket: Recording, sockets };
}
