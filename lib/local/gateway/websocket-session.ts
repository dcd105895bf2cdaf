import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { type WebSocket, WebSocketServer } from 'ws';
import { webSocketRoutes } from '#wiring';
import type { HandlerHost } from '../handlers';
import { MAX_FRAME_BYTES, type SocketEntry } from '../management-api';
import { headerRecord } from './http-event';
import { refuseOnSocket } from './http-replies';
import { mockRouteAnswer } from './mock-routes';
import { type GatewayState, requestUrl } from './state';
import { connectQuery } from './websocket-target';

type WebSocketRouteKey = '$connect' | '$disconnect' | '$default';

/** What a WebSocket session needs from its gateway: the open sockets, the handlers, the shared state. */
export interface WebSocketContext {
  readonly sockets: Map<string, SocketEntry>;
  readonly handlers: HandlerHost;
  readonly state: GatewayState;
  readonly server: WebSocketServer;
}

/** No compression, as on API Gateway; the management API's whole-frame writes rely on it (`textFrame`). */
export const webSocketServer = () => new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });

/** API Gateway WebSocket connection ids look like `L0SM9cOFvHcCIhw=`. */
const newConnectionId = () => randomBytes(10).toString('base64');

function routeOf(routeKey: WebSocketRouteKey) {
  const route = webSocketRoutes.find((candidate) => candidate.routeKey === routeKey);
  if (!route) throw new Error(`No WebSocket route ${routeKey} in functions/wiring/`);
  return route;
}

function webSocketEvent(
  context: WebSocketContext,
  routeKey: WebSocketRouteKey,
  connectionId: string,
  extra: Record<string, unknown>,
  sourceIp?: string,
) {
  const eventType = routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE';
  return {
    requestContext: {
      routeKey,
      eventType,
      connectionId,
      domainName: context.state.domainName,
      stage: 'local',
      apiId: 'local',
      requestId: randomUUID(),
      connectedAt: context.sockets.get(connectionId)?.connectedAt ?? Date.now(),
      requestTimeEpoch: Date.now(),
      messageDirection: 'IN',
      // As API Gateway's: every event of a connection carries the address it connected from.
      identity: { sourceIp: sourceIp ?? context.sockets.get(connectionId)?.sourceIp ?? '' },
    },
    isBase64Encoded: false,
    ...extra,
  };
}

async function invokeRoute(
  context: WebSocketContext,
  routeKey: WebSocketRouteKey,
  connectionId: string,
  extra: Record<string, unknown>,
  sourceIp?: string,
) {
  const route = routeOf(routeKey);
  const event = webSocketEvent(context, routeKey, connectionId, extra, sourceIp);
  return (await context.handlers.invoke(route.handler, route.id, event)) as APIGatewayProxyResultV2;
}

/**
 * `GET /ws/rooms/<roomId>`, `GET /ws/user/<userId>`, `GET /app/<key>` (Pusher's) (or `/ws?roomId=` / `/ws?userId=`, the form
 * API Gateway's single stage URL takes): `$connect` runs before the upgrade, and a non-2xx
 * answer refuses it. The connection is registered only after the upgrade completes, so, as on
 * API Gateway, posting to it from inside `$connect` fails with 410.
 */
export async function handleUpgrade(context: WebSocketContext, request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  // A client may vanish while `$connect` runs; its socket's error must not end the process.
  socket.on('error', () => socket.destroy());
  const target = connectQuery(requestUrl(context.state, request.url));
  if ('error' in target) return refuseOnSocket(socket, target.status, { error: target.error });
  const connectionId = newConnectionId();
  const headers = headerRecord(request);
  const result = await invokeRoute(
    context,
    '$connect',
    connectionId,
    { headers, queryStringParameters: target.query },
    request.socket.remoteAddress ?? '',
  );
  const status = typeof result === 'object' && result !== null ? (result.statusCode ?? 200) : 200;
  if (status < 200 || status >= 300) {
    // API Gateway passes the $connect answer's headers (Retry-After on a 429) to the client.
    return refuseOnSocket(
      socket,
      status,
      typeof result === 'object' && result?.body ? result.body : '',
      typeof result === 'object' && result?.headers ? result.headers : {},
    );
  }
  context.server.handleUpgrade(request, socket, head, (webSocket) => {
    const now = Date.now();
    context.sockets.set(connectionId, {
      socket: webSocket,
      wire: socket,
      connectedAt: now,
      lastActiveAt: now,
      sourceIp: request.socket.remoteAddress ?? '',
      userAgent: headers['user-agent'] ?? '',
    });
    followSession(context, connectionId, webSocket);
  });
}

/** An open connection's life: each frame to its MOCK route or `$default`, and `$disconnect` when the client leaves. */
function followSession(context: WebSocketContext, connectionId: string, webSocket: WebSocket): void {
  // A protocol error (a frame over the limit, invalid UTF-8, a bad opcode) closes this socket
  // with its code (1009, 1007, 1002), as API Gateway does; unheard, it would end the process.
  webSocket.on('error', (error) => {
    if (!context.state.stopping) console.warn(`WebSocket ${connectionId} closed on a protocol error: ${error.message}`);
  });
  webSocket.on('message', (data, isBinary) => {
    const entry = context.sockets.get(connectionId);
    if (entry) entry.lastActiveAt = Date.now();
    const body = isBinary ? Buffer.from(data as Buffer).toString('base64') : data.toString();
    const answer = isBinary ? undefined : mockRouteAnswer(body);
    if (answer) return webSocket.send(answer);
    invokeRoute(context, '$default', connectionId, { body, isBase64Encoded: isBinary }).catch((error) => {
      console.error('$default failed', error);
    });
  });
  webSocket.on('close', () => {
    context.sockets.delete(connectionId);
    if (context.state.stopping) return;
    invokeRoute(context, '$disconnect', connectionId, {}).catch((error) => console.error('$disconnect failed', error));
  });
}
