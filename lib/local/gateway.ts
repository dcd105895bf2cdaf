import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';
import { WebSocketServer } from 'ws';
import { gatewayAnswers, type HttpRoute, httpRoutes, ROUTE_SELECTION_FIELD, webSocketRoutes } from '#wiring';
import type { ConnectionsTransport } from '../../functions/shared/gateway';
import type { HandlerHost } from './handlers';
import {
  MAX_FRAME_BYTES,
  type ManagementAnswer,
  type ManagementFaults,
  type ManagementRequest,
  type ManagementStats,
  managementApi,
  payloadTooLarge,
  type SocketEntry,
} from './management-api';
import { LocalResponseStream } from './streaming';

/** API Gateway's payload limit for HTTP APIs. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  readonly route: HttpRoute;
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
  /** Literal segments count: API Gateway prefers the most specific match. */
  readonly specificity: number;
}

function compile(route: HttpRoute): CompiledRoute {
  const paramNames: string[] = [];
  const segments = route.path.split('/').map((segment) => {
    const param = /^\{(\w+)\}$/.exec(segment);
    if (!param?.[1]) return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    paramNames.push(param[1]);
    return '([^/]+)';
  });
  return {
    route,
    pattern: new RegExp(`^${segments.join('/')}$`),
    paramNames,
    specificity: route.path.split('/').filter((s) => !s.startsWith('{')).length,
  };
}

const compiledRoutes = httpRoutes.map(compile).sort((a, b) => b.specificity - a.specificity);

const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization,content-type,x-service-api-key,x-service-operator-key,x-trace-id,x-service-project-id',
  'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
  'access-control-expose-headers': 'retry-after,x-trace-id',
};

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...CORS_HEADERS, ...headers });
  response.end(JSON.stringify(body));
}

function readBody(request: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_PAYLOAD_BYTES ? 'too_large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function headerRecord(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

function queryRecord(url: URL): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  for (const key of new Set(url.searchParams.keys())) query[key] = url.searchParams.getAll(key).join(',');
  return Object.keys(query).length ? query : undefined;
}

const isTextual = (contentType: string | undefined) => !contentType || /json|text|xml|x-www-form-urlencoded|javascript/i.test(contentType);

/** Path parameters percent-decoded, or `undefined` when an escape is malformed (API Gateway answers 400). */
function decodePathParameters(names: readonly string[], values: RegExpExecArray): Record<string, string> | undefined {
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index + 1] ?? '')]));
  } catch {
    return undefined;
  }
}

const answersByType = new Map([...gatewayAnswers].map(([type, answer]) => [type, JSON.stringify(answer)]));

/**
 * API Gateway's route selection on the frame's `type`: the answer of the MOCK route the frame
 * selects, or `undefined` for a frame that goes to `$default` (any other type, or not JSON).
 */
function gatewayAnswer(text: string): string | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  const type = (frame as Record<string, unknown> | null)?.[ROUTE_SELECTION_FIELD];
  return typeof type === 'string' ? answersByType.get(type) : undefined;
}

/** Answers on a raw socket (an upgrade request, a request Node could not parse) with an HTTP error and a JSON body, as every refusal has. */
function refuseUpgrade(
  socket: import('node:stream').Duplex,
  status: number,
  body: string | object,
  headers: Record<string, string | number | boolean> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headerLines = Object.entries(headers)
    .filter(([name]) => !/^(content-length|connection|content-type)$/i.test(name))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Refused'}\r\nContent-Type: application/json\r\n${headerLines}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** API Gateway WebSocket connection ids look like `L0SM9cOFvHcCIhw=`. */
const newConnectionId = () => randomBytes(10).toString('base64');

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

/**
 * The local stand-in for API Gateway: one `node:http` server that routes HTTP requests from the
 * wiring table to handler modules (payload format 2.0), runs the WebSocket API's `$connect`,
 * `$default` and `$disconnect` routes, and serves the `@connections` management API the real
 * `ApiGatewayManagementApiClient` talks to. Handlers are imported in-process on first use.
 */
export async function startGateway(options: {
  port: number;
  host?: string;
  handlers: HandlerHost;
  /** The access key the runtime gives its own handlers: the only one `@connections` answers. */
  managementAccessKeyId: string;
  /** Failures to inject into `@connections` calls (none by default). */
  managementFaults?: ManagementFaults;
  /** Served at `GET /_local/stats`: what CloudWatch would show on AWS (local only, never deployed). */
  localStats?: () => unknown;
  /**
   * Served at `POST /_local/fan-out` with `{ "running": false | true }`: takes the event fan-out down
   * and up again, for outage tests. Only when the runtime was started with controls (never deployed).
   */
  fanOutSwitch?: { stop(): Promise<void>; start(): Promise<void>; readonly running: boolean };
}): Promise<Gateway> {
  const host = options.host ?? '127.0.0.1';

  const sockets = new Map<string, SocketEntry>();
  const management = managementApi(sockets, options.managementAccessKeyId, options.managementFaults);
  const wsRoute = (routeKey: string) => {
    const route = webSocketRoutes.find((candidate) => candidate.routeKey === routeKey);
    if (!route) throw new Error(`No WebSocket route ${routeKey} in functions/wiring/`);
    return route;
  };

  let baseUrl = '';
  let domainName = '';
  let stopping = false;
  let ready = false;

  /**
   * The request target is always a path here (origin-form). Resolved against the base it would be
   * read as a URL of its own when it starts with `//` (`//?x` names the host `?x` and throws), so it
   * is appended to the base instead: `//rooms` stays a path, which no route serves.
   */
  const requestUrl = (target: string | undefined) => new URL(`${baseUrl}${target?.startsWith('/') ? target : `/${target ?? ''}`}`);

  async function handleHttp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = requestUrl(request.url);
    const method = (request.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith('/@connections/')) return handleManagementApi(method, url, request, response);
    // Setup (the demo project, its key) runs after the port opens; a probe must not see it half done.
    if (!ready && url.pathname === '/health' && method === 'GET') {
      return sendJson(response, 503, { status: 'starting', time: new Date().toISOString() }, { 'retry-after': '1' });
    }
    if (url.pathname === '/_local/stats' && method === 'GET' && options.localStats) return sendJson(response, 200, options.localStats());
    if (url.pathname === '/_local/fan-out' && method === 'POST' && options.fanOutSwitch)
      return switchFanOut(request, response, options.fanOutSwitch);
    if (method === 'OPTIONS') {
      response.writeHead(204, CORS_HEADERS);
      response.end();
      return;
    }
    let match: { compiled: CompiledRoute; values: RegExpExecArray } | undefined;
    let pathMatched = false;
    for (const compiled of compiledRoutes) {
      const values = compiled.pattern.exec(url.pathname);
      if (!values) continue;
      pathMatched = true;
      if (compiled.route.method === method) {
        match = { compiled, values };
        break;
      }
    }
    if (!match) {
      const status = pathMatched ? 405 : 404;
      sendJson(response, status, {
        error: { code: status === 405 ? 'method_not_allowed' : 'not_found', message: `No route for ${method} ${url.pathname}` },
      });
      return;
    }
    const body = await readBody(request);
    if (body === 'too_large') {
      sendJson(response, 413, {
        error: { code: 'payload_too_large', message: `Request bodies are limited to ${MAX_PAYLOAD_BYTES} bytes` },
      });
      return;
    }
    const { route, paramNames } = match.compiled;
    const pathParameters = decodePathParameters(paramNames, match.values);
    if (!pathParameters) {
      sendJson(response, 400, { error: { code: 'invalid_path', message: 'The path has a malformed percent-encoding' } });
      return;
    }
    const headers = headerRecord(request);
    const textual = isTextual(headers['content-type']);
    const now = new Date();
    // A function URL's event names no route and carries no path parameters, unlike the HTTP API's.
    const viaFunctionUrl = route.transport === 'functionUrl';
    const routeKey = viaFunctionUrl ? '$default' : `${route.method} ${route.path}`;
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey,
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      headers,
      queryStringParameters: queryRecord(url),
      pathParameters: paramNames.length && !viaFunctionUrl ? pathParameters : undefined,
      body: body.length ? (textual ? body.toString('utf8') : body.toString('base64')) : undefined,
      isBase64Encoded: body.length > 0 && !textual,
      requestContext: {
        accountId: '000000000000',
        apiId: 'local',
        domainName,
        domainPrefix: 'local',
        http: {
          method,
          path: url.pathname,
          protocol: `HTTP/${request.httpVersion}`,
          sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
          userAgent: headers['user-agent'] ?? '',
        },
        requestId: randomUUID(),
        routeKey,
        stage: '$default',
        time: now.toISOString(),
        timeEpoch: now.getTime(),
      },
    };
    if (route.transport === 'functionUrl') {
      // A function URL in RESPONSE_STREAM mode on AWS: the handler writes the body as it goes.
      const stream = new LocalResponseStream(response, CORS_HEADERS);
      await options.handlers.invokeStreaming(route.handler, route.id, event, stream);
      if (!stream.writableEnded) stream.end();
      return;
    }
    const result = (await options.handlers.invoke(route.handler, route.id, event)) as APIGatewayProxyResultV2;
    writeLambdaResult(response, result);
  }

  function writeLambdaResult(response: ServerResponse, result: APIGatewayProxyResultV2): void {
    if (typeof result === 'string' || result === undefined || result === null) {
      response.writeHead(200, { 'content-type': 'application/json', ...CORS_HEADERS });
      response.end(typeof result === 'string' ? result : '');
      return;
    }
    const headers: Record<string, string | number | boolean> = { ...CORS_HEADERS, ...(result.headers ?? {}) };
    const setCookies = result.cookies?.length ? { 'set-cookie': result.cookies } : {};
    response.writeHead(result.statusCode ?? 200, { ...headers, ...setCookies } as Record<string, string>);
    response.end(result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
  }

  async function switchFanOut(request: IncomingMessage, response: ServerResponse, fanOut: NonNullable<typeof options.fanOutSwitch>) {
    const body = await readBody(request);
    let running: unknown;
    try {
      running = body === 'too_large' ? undefined : (JSON.parse(body.toString('utf8') || '{}') as { running?: unknown }).running;
    } catch {
      running = undefined;
    }
    if (typeof running !== 'boolean')
      return sendJson(response, 400, { error: { code: 'validation_failed', message: 'Send {"running": true|false}' } });
    await (running ? fanOut.start() : fanOut.stop());
    sendJson(response, 200, { running: fanOut.running });
  }

  /** The management API over HTTP, as `ApiGatewayManagementApiClient` calls it. */
  async function handleManagementApi(method: string, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const answer =
      body === 'too_large'
        ? payloadTooLarge
        : await management.request({ method, path: url.pathname, authorization: request.headers.authorization, body });
    if (answer.body) sendJson(response, answer.status, answer.body, answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {});
    else {
      response.writeHead(answer.status);
      response.end();
    }
  }

  function webSocketEvent(routeKey: string, connectionId: string, extra: Record<string, unknown>) {
    const eventType = routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE';
    return {
      requestContext: {
        routeKey,
        eventType,
        connectionId,
        domainName,
        stage: 'local',
        apiId: 'local',
        requestId: randomUUID(),
        connectedAt: sockets.get(connectionId)?.connectedAt ?? Date.now(),
        requestTimeEpoch: Date.now(),
        messageDirection: 'IN',
      },
      isBase64Encoded: false,
      ...extra,
    };
  }

  async function invokeWebSocketRoute(
    routeKey: '$connect' | '$disconnect' | '$default',
    connectionId: string,
    extra: Record<string, unknown>,
  ) {
    const route = wsRoute(routeKey);
    return (await options.handlers.invoke(
      route.handler,
      route.id,
      webSocketEvent(routeKey, connectionId, extra),
    )) as APIGatewayProxyResultV2;
  }

  // No compression, as on API Gateway; the management API's whole-frame writes rely on it (`textFrame`).
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });

  /**
   * `GET /ws/rooms/<roomId>`, `GET /ws/user/<userId>` (or `/ws?roomId=` / `/ws?userId=`, the form
   * API Gateway's single stage URL takes): `$connect` runs before the upgrade, and a non-2xx
   * answer refuses it. The connection is registered only after the upgrade completes, so, as on
   * API Gateway, posting to it from inside `$connect` fails with 410.
   */
  async function handleUpgrade(request: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer): Promise<void> {
    // A client may vanish while `$connect` runs; its socket's error must not end the process.
    socket.on('error', () => socket.destroy());
    const url = requestUrl(request.url);
    const channel = /^\/ws\/(rooms|user)\/([^/]+)$/.exec(url.pathname);
    if (!channel && url.pathname !== '/ws') {
      return refuseUpgrade(socket, 404, { error: { code: 'not_found', message: `No WebSocket route for ${url.pathname}` } });
    }
    const query = queryRecord(url) ?? {};
    if (channel) {
      const decoded = decodePathParameters(['kind', 'id'], channel);
      if (!decoded) {
        return refuseUpgrade(socket, 400, { error: { code: 'invalid_path', message: 'The path has a malformed percent-encoding' } });
      }
      query[channel[1] === 'rooms' ? 'roomId' : 'userId'] = decoded.id as string;
    }
    const connectionId = newConnectionId();
    const headers = headerRecord(request);
    const result = await invokeWebSocketRoute('$connect', connectionId, { headers, queryStringParameters: query });
    const status = typeof result === 'object' && result !== null ? (result.statusCode ?? 200) : 200;
    if (status < 200 || status >= 300) {
      // API Gateway passes the $connect answer's headers (Retry-After on a 429) to the client.
      return refuseUpgrade(
        socket,
        status,
        typeof result === 'object' && result?.body ? result.body : '',
        typeof result === 'object' && result?.headers ? result.headers : {},
      );
    }
    webSockets.handleUpgrade(request, socket, head, (webSocket) => {
      const now = Date.now();
      sockets.set(connectionId, {
        socket: webSocket,
        wire: socket,
        connectedAt: now,
        lastActiveAt: now,
        sourceIp: request.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      });
      // A protocol error (a frame over the limit, invalid UTF-8, a bad opcode) closes this socket
      // with its code (1009, 1007, 1002), as API Gateway does; unheard, it would end the process.
      webSocket.on('error', (error) => {
        if (!stopping) console.warn(`WebSocket ${connectionId} closed on a protocol error: ${error.message}`);
      });
      webSocket.on('message', (data, isBinary) => {
        const entry = sockets.get(connectionId);
        if (entry) entry.lastActiveAt = Date.now();
        const body = isBinary ? Buffer.from(data as Buffer).toString('base64') : data.toString();
        const answer = isBinary ? undefined : gatewayAnswer(body);
        if (answer) return webSocket.send(answer);
        invokeWebSocketRoute('$default', connectionId, { body, isBase64Encoded: isBinary }).catch((error) => {
          console.error('$default failed', error);
        });
      });
      webSocket.on('close', () => {
        sockets.delete(connectionId);
        if (stopping) return;
        invokeWebSocketRoute('$disconnect', connectionId, {}).catch((error) => console.error('$disconnect failed', error));
      });
    });
  }

  const server: Server = createServer((request, response) => {
    handleHttp(request, response).catch((error) => {
      console.error('gateway error', error);
      if (!response.headersSent) sendJson(response, 502, { error: { code: 'bad_gateway', message: 'The handler failed' } });
      else response.end();
    });
  });
  // A request Node cannot parse (a head over 16 KB, bad framing) is refused before any route sees
  // it; it still gets the service's JSON error shape rather than Node's bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    refuseUpgrade(
      socket,
      tooLarge ? 431 : 400,
      tooLarge
        ? { error: { code: 'headers_too_large', message: 'The request line and headers are limited to 16 KB' } }
        : { error: { code: 'bad_request', message: 'The request is not valid HTTP' } },
    );
  });
  server.on('upgrade', (request, socket, head) => {
    handleUpgrade(request, socket, head).catch((error) => {
      console.error('upgrade error', error);
      socket.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${host}:${port}`;
  domainName = `${host}:${port}`;

  return {
    port,
    baseUrl,
    markReady: () => {
      ready = true;
    },
    connectionCount: () => sockets.size,
    managementStats: management.stats,
    directTransport: management.transport,
    manageRequest: management.request,
    stop: async () => {
      stopping = true;
      for (const { socket } of sockets.values()) socket.terminate();
      webSockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
