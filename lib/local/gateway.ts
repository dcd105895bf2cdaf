import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ErrorBody } from '#shared/error-codes';
import type { ConnectionsTransport } from '../../functions/shared/gateway';
import { DEFAULT_CORS_ALLOW_ORIGINS } from '../cors';
import { localCors } from './gateway/cors';
import { dispatchHttpRoute } from './gateway/http-dispatch';
import { answerPreflight, refuseOnSocket, sendJson } from './gateway/http-replies';
import { answerLocalControl, type LocalControls } from './gateway/local-controls';
import { serveManagementApi } from './gateway/management-endpoint';
import { type GatewayState, requestUrl } from './gateway/state';
import { webPages } from './gateway/web-pages';
import { handleUpgrade, type WebSocketContext, webSocketServer } from './gateway/websocket-session';
import type { HandlerHost } from './handlers';
import {
  type ManagementAnswer,
  type ManagementFaults,
  type ManagementRequest,
  type ManagementStats,
  managementApi,
  type SocketEntry,
} from './management-api';

export interface Gateway {
  readonly port: number;
  readonly baseUrl: string;
  /** Lets `GET /health` answer 200; until then it answers 503 `starting` (the runtime calls it last). */
  markReady(): void;
  /** Open WebSocket connections, for tests and benchmarks. */
  connectionCount(): number;
  managementStats(): ManagementStats;
  /** The `@connections` API without HTTP: each frame handed to its socket (see `managementApi`). */
  readonly directTransport: ConnectionsTransport;
  /** The `@connections` API for an SDK client in this process: its requests answered without a socket. */
  manageRequest(request: ManagementRequest): Promise<ManagementAnswer>;
  stop(): Promise<void>;
}

export interface GatewayOptions extends LocalControls {
  readonly port: number;
  readonly host?: string;
  readonly handlers: HandlerHost;
  /** The access key the runtime gives its own handlers: the only one `@connections` answers. */
  readonly managementAccessKeyId: string;
  /** Failures to inject into `@connections` calls (none by default). */
  readonly managementFaults?: ManagementFaults;
  /** The deployment's `corsAllowOrigins` (`lib/cors.ts`). @default every origin */
  readonly corsAllowOrigins?: readonly string[];
}

/**
 * The local stand-in for API Gateway: one `node:http` server that routes HTTP requests from the
 * wiring table to handler modules (payload format 2.0), runs the WebSocket API's `$connect`,
 * `$default` and `$disconnect` routes, and serves the `@connections` management API the real
 * `ApiGatewayManagementApiClient` talks to. Handlers are imported in-process on first use.
 * `fanOutSwitch` is served only when the runtime was started with controls (never deployed); the
 * demo page (`/`) and the console (`/console/`) are served here too, never by the wiring table.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const host = options.host ?? '127.0.0.1';
  const state: GatewayState = { baseUrl: '', domainName: '', ready: false, stopping: false };
  const sockets = new Map<string, SocketEntry>();
  const management = managementApi(sockets, options.managementAccessKeyId, options.managementFaults);
  const webSockets: WebSocketContext = { sockets, handlers: options.handlers, state, server: webSocketServer() };
  const cors = localCors(options.corsAllowOrigins ?? DEFAULT_CORS_ALLOW_ORIGINS);
  const pages = webPages();

  const handleHttp = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = requestUrl(state, request.url);
    const method = (request.method ?? 'GET').toUpperCase();
    const target = { method, pathname: url.pathname, ready: state.ready };
    if (url.pathname.startsWith('/@connections/')) return serveManagementApi(management.request, request, response, target);
    if (method === 'OPTIONS') return answerPreflight(response, cors.preflightHeaders(request, url.pathname));
    for (const [name, value] of Object.entries(cors.answerHeaders(request, url.pathname))) response.setHeader(name, value);
    if (await answerLocalControl(request, response, target, options)) return;
    if (await pages.serve(request, response, target)) return;
    return dispatchHttpRoute(request, response, { url, method, domainName: state.domainName }, options.handlers);
  };
  const server = gatewayServer(handleHttp, (request, socket, head) => handleUpgrade(webSockets, request, socket, head));

  const port = await listen(server, options.port, host);
  state.baseUrl = `http://${host}:${port}`;
  state.domainName = `${host}:${port}`;

  return {
    port,
    baseUrl: state.baseUrl,
    markReady: () => {
      state.ready = true;
    },
    connectionCount: () => sockets.size,
    managementStats: management.stats,
    directTransport: management.transport,
    manageRequest: management.request,
    stop: async () => {
      state.stopping = true;
      for (const { socket } of sockets.values()) socket.terminate();
      webSockets.server.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The HTTP server with its failure answers: a handler that throws is a 502, a request Node cannot parse a JSON 4xx. */
function gatewayServer(
  handleHttp: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  handleUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>,
): Server {
  const server = createServer((request, response) => {
    handleHttp(request, response).catch((error) => {
      console.error('gateway error', error);
      if (!response.headersSent)
        sendJson(response, 502, { error: { code: 'bad_gateway', message: 'The handler failed' } satisfies ErrorBody });
      else response.end();
    });
  });
  // A request Node cannot parse (a head over 16 KB, bad framing) is refused before any route sees
  // it; it still gets the service's JSON error shape rather than Node's bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    refuseOnSocket(
      socket,
      tooLarge ? 431 : 400,
      tooLarge
        ? { error: { code: 'headers_too_large', message: 'The request line and headers are limited to 16 KB' } satisfies ErrorBody }
        : { error: { code: 'bad_request', message: 'The request is not valid HTTP' } satisfies ErrorBody },
    );
  });
  server.on('upgrade', (request, socket, head) => {
    handleUpgrade(request, socket, head).catch((error) => {
      console.error('upgrade error', error);
      socket.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  return server;
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
