/**
 * Baseline A of the realtime bench: the least a WebSocket fan-out can do. A bare `ws` server
 * whose rooms are URL paths (`/rooms/<roomId>`); every frame a client sends goes, unchanged, to
 * every other open client of its room. No auth, no parsing, no storage: the physical limit of
 * one Node process writing frames to sockets on this machine.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export interface PlainWsServer {
  /** `ws://127.0.0.1:<port>`; a room is `${url}/rooms/<roomId>`. */
  readonly url: string;
  /** Frames written to sockets so far. */
  sentFrames(): number;
  stop(): Promise<void>;
}

const ROOM_PATH = /^\/rooms\/([^/?]+)/;

export async function startPlainWsServer(options: { host?: string; port?: number } = {}): Promise<PlainWsServer> {
  const host = options.host ?? '127.0.0.1';
  const rooms = new Map<string, Set<WebSocket>>();
  let sent = 0;
  const server = createServer((_request, response) => {
    response.writeHead(426).end();
  });
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const roomId = ROOM_PATH.exec(request.url ?? '')?.[1];
    if (!roomId) {
      socket.close(1008, 'no room');
      return;
    }
    let members = rooms.get(roomId);
    if (!members) {
      members = new Set();
      rooms.set(roomId, members);
    }
    const room = members;
    room.add(socket);
    socket.on('message', (data, isBinary) => {
      for (const other of room) {
        if (other === socket || other.readyState !== other.OPEN) continue;
        other.send(data, { binary: isBinary });
        sent++;
      }
    });
    socket.on('close', () => {
      room.delete(socket);
      if (room.size === 0) rooms.delete(roomId);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://${host}:${port}`,
    sentFrames: () => sent,
    stop: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
