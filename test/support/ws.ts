import WebSocket from 'ws';
import { runtime } from './api';

/** A server frame as the client receives it. */
export type Frame = Record<string, any> & { type: string };

/**
 * A client connection to `/ws/rooms/<roomId>`. Every frame is kept in `frames`, so a test can wait
 * for the one it expects and still check what else arrived.
 */
export class RoomSocket {
  readonly frames: Frame[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(readonly socket: WebSocket) {
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

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

/** The outcome of a handshake: an open socket, or the HTTP status and body the gateway refused it with. */
export type Handshake =
  | { readonly open: true; readonly socket: RoomSocket }
  | { readonly open: false; readonly status: number; readonly body: any };

export const roomSocketUrl = (roomId: string, token?: string) =>
  `${runtime().wsUrl}/ws/rooms/${encodeURIComponent(roomId)}${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`;

/** Opens a WebSocket to a room; resolves with the refusal instead of throwing when the upgrade is refused. */
export function tryConnect(roomId: string, token?: string): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(roomSocketUrl(roomId, token));
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
        resolve({ open: false, status: response.statusCode ?? 0, body });
        request.destroy();
      });
    });
    socket.on('error', (error) => reject(error));
  });
}

/** Opens a WebSocket to a room and fails the test when the handshake is refused. */
export async function connect(roomId: string, token: string): Promise<RoomSocket> {
  const handshake = await tryConnect(roomId, token);
  if (!handshake.open) throw new Error(`WebSocket refused: ${handshake.status} ${JSON.stringify(handshake.body)}`);
  return handshake.socket;
}
