import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { runtime } from './api';

/** A server frame as the client receives it. */
export type Frame = Record<string, any> & { type: string };

/** How the server closed a connection (or the client, when the test closed it). */
export interface CloseInfo {
  readonly code: number;
  readonly reason: string;
}

/**
 * A client connection to `/ws/rooms/<roomId>` (or `/ws/user/<userId>`). Every frame is kept in
 * `frames`, so a test can wait for the one it expects and still check what else arrived.
 */
export class RoomSocket {
  readonly frames: Frame[] = [];
  /** Resolves when the connection closed, whoever closed it. */
  readonly closed: Promise<CloseInfo>;
  private readonly waiters = new Set<() => void>();

  constructor(readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => {
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    socket.on('message', (data) => {
      let frame: Frame;
      try {
        frame = JSON.parse(data.toString()) as Frame;
      } catch {
        frame = { type: '<not json>', raw: data.toString() };
      }
      this.frames.push(frame);
      for (const wake of this.waiters) wake();
    });
  }

  /** Sends a JSON frame (objects) or raw text (strings). */
  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame (received so far or later) matching `predicate`; rejects after `timeoutMs`. */
  next(predicate: (frame: Frame) => boolean, timeoutMs = 5000): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const frame = this.frames.find(predicate);
        if (!frame) return false;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(frame);
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`No matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(check);
    });
  }

  /** Frames received so far whose `type` is one of `types`. */
  ofType(...types: string[]): Frame[] {
    return this.frames.filter((frame) => types.includes(frame.type));
  }

  /** This connection's socket id, from its `connected` frame (waits for it). */
  async socketId(timeoutMs = 5000): Promise<string> {
    return (await this.next((frame) => frame.type === 'connected', timeoutMs)).socketId as string;
  }

  /** Whether the connection is still open. */
  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

/** The outcome of a handshake: an open socket, or the HTTP status, headers and body the gateway refused it with. */
export type Handshake =
  | { readonly open: true; readonly socket: RoomSocket }
  | { readonly open: false; readonly status: number; readonly body: any; readonly headers: IncomingHttpHeaders };

/** Query options of a connection: `history=<n>`, `cache=1`, and the gateway to use (a spawned runtime's). */
export interface SocketOptions {
  /** `history` query value; numbers and raw strings (for validation tests) are sent as given. */
  readonly history?: number | string;
  /** `true` sends `cache=1`; a string is sent as given. */
  readonly cache?: boolean | string;
  /** `ws://host:port` of the gateway. @default the shared runtime's */
  readonly wsUrl?: string;
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

/** Opens a WebSocket to a URL; resolves with the refusal instead of throwing when the upgrade is refused. */
export function tryOpen(url: string): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const room = new RoomSocket(socket);
    socket.once('open', () => resolve({ open: true, socket: room }));
    socket.once('unexpected-response', (request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // Non-JSON refusals keep their text.
        }
        resolve({ open: false, status: response.statusCode ?? 0, body, headers: response.headers });
        request.destroy();
      });
    });
    socket.on('error', (error) => reject(error));
  });
}

/** Opens a WebSocket to a room; resolves with the refusal instead of throwing when the upgrade is refused. */
export const tryConnect = (roomId: string, token?: string, options: SocketOptions = {}): Promise<Handshake> =>
  tryOpen(roomSocketUrl(roomId, token, options));

/** Opens a user-channel WebSocket; resolves with the refusal instead of throwing when the upgrade is refused. */
export const tryConnectUser = (userId: string, token?: string, options: SocketOptions = {}): Promise<Handshake> =>
  tryOpen(userSocketUrl(userId, token, options));

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
