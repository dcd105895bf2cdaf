import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';

// Shared by the tests and the post-deploy smoke test (`bin/smoke.ts`): both wait for particular
// frames among everything a socket receives, and report a refused upgrade with its status and body.

/** A server frame as the client receives it. */
export type Frame = Record<string, any> & { type: string };

/** How the server closed a connection (or the client, when it closed it itself). */
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

/**
 * Opens a WebSocket to a URL; resolves with the refusal instead of throwing when the upgrade is
 * refused. `origin` is the `Origin` header a browser on that site would send.
 */
export function tryOpen(url: string, options: { readonly origin?: string } = {}): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options.origin === undefined ? {} : { origin: options.origin });
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
