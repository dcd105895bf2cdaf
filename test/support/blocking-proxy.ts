import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';

export interface BlockingProxy {
  /** `http://127.0.0.1:<port>`: use it as the SDK's baseUrl. */
  readonly baseUrl: string;
  /** Answer every WebSocket upgrade with 503, as a corporate proxy that does not speak WebSocket does. */
  refuseWebSocket: boolean;
  /** Answer `GET /rooms/{roomId}/stream` with 503, as a buffering proxy that breaks SSE might. */
  refuseStream: boolean;
  /** What the proxy refused and forwarded so far. */
  readonly counts: { refusedUpgrades: number; refusedStreams: number; forwardedUpgrades: number; forwardedRequests: number };
  stop(): Promise<void>;
}

const STREAM_PATH = /^\/rooms\/[^/]+\/stream(?:\?|$)/;

/**
 * A reverse proxy on a free loopback port in front of `targetUrl` (a local runtime's gateway) that
 * can refuse WebSocket upgrades and SSE streams and forwards everything else byte for byte,
 * streaming included. It lets a test take a transport away without touching the server.
 */
export async function startBlockingProxy(
  targetUrl: string,
  options: { refuseWebSocket?: boolean; refuseStream?: boolean } = {},
): Promise<BlockingProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 80);
  const open = new Set<Duplex>();
  const track = (socket: Duplex) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const counts = { refusedUpgrades: 0, refusedStreams: 0, forwardedUpgrades: 0, forwardedRequests: 0 };
  let baseUrl = '';
  const proxy: BlockingProxy = {
    get baseUrl() {
      return baseUrl;
    },
    refuseWebSocket: options.refuseWebSocket ?? false,
    refuseStream: options.refuseStream ?? false,
    counts,
    stop: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server: Server = createServer((request, response) => {
    if (proxy.refuseStream && STREAM_PATH.test(request.url ?? '')) {
      counts.refusedStreams += 1;
      request.resume();
      response.writeHead(503, { 'content-type': 'text/plain', connection: 'close' });
      response.end('streaming is blocked by this proxy');
      return;
    }
    counts.forwardedRequests += 1;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: targetPort,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, host: target.host },
      },
      (answer: IncomingMessage) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        // Flush each chunk as it comes: SSE must not wait for the end of the response.
        response.flushHeaders();
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end();
    });
    // A client that goes away (an aborted SSE fetch) takes its upstream request with it.
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  server.on('connection', track);

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (proxy.refuseWebSocket) {
      counts.refusedUpgrades += 1;
      const body = 'WebSocket is blocked by this proxy';
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    counts.forwardedUpgrades += 1;
    const upstream: Socket = netConnect(targetPort, target.hostname, () => {
      const lines = [`${request.method} ${request.url} HTTP/${request.httpVersion}`];
      for (let index = 0; index < request.rawHeaders.length; index += 2) {
        const name = request.rawHeaders[index] as string;
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? target.host : request.rawHeaders[index + 1]}`);
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
