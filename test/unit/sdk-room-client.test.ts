import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { type ConnectionState, createRoomClient, type RoomClient } from '../../sdk/index';

const clients: RoomClient[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const FLUXY = { baseBackoffMs: 500, maxBackoffMs: 20_000 };
const targeted = () => json(200, { flags: {}, flagship: true, reconnectBackoff: FLUXY });
const anonymous = () => json(200, { flags: {}, flagship: false, reconnectBackoff: { baseBackoffMs: 1000, maxBackoffMs: 8000 } });
const refused = () => json(401, { error: { code: 'token_expired', message: 'The token has expired' } });

/**
 * The REST side of the service, in memory: `GET /client/feature-flags` answered by `flags` (given
 * the bearer token), an empty room otherwise; `failNextPoll` makes the next `after=` poll a 500.
 */
function fakeService(flags: (token: string) => Response | Promise<Response>) {
  const requests: { readonly at: number; readonly path: string; readonly token: string }[] = [];
  const service = {
    requests,
    failNextPoll: false,
    flagReads: () => requests.filter((request) => request.path === '/client/feature-flags'),
    polls: () => requests.filter((request) => request.path.includes('after=')),
    fetch: async (input: string, init?: RequestInit) => {
      const url = new URL(input);
      const token = ((init?.headers as Record<string, string> | undefined)?.authorization ?? '').replace(/^Bearer /, '');
      requests.push({ at: Date.now(), path: `${url.pathname}${url.search}`, token });
      if (url.pathname === '/client/feature-flags') return flags(token);
      if (url.searchParams.has('after') && service.failNextPoll) {
        service.failNextPoll = false;
        return json(500, { error: { code: 'internal_error', message: 'Boom' } });
      }
      return json(200, { messages: [], hasMore: false });
    },
  };
  return service;
}

/**
 * A polling client whose token is `stale` for its first request (the feature flags) and `fresh`
 * afterwards, as a `getToken` renewing an expired token would give. Returns how long its first
 * reconnect waited: with `Math.random` pinned just below 1 that is the curve's first ceiling - 1.
 */
async function firstReconnectDelay(flags: (token: string) => Response | Promise<Response>) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
  const service = fakeService(flags);
  let calls = 0;
  const client = createRoomClient({
    baseUrl: 'http://chat.test',
    roomId: 'lobby',
    getToken: () => (calls++ === 0 ? 'stale' : 'fresh'),
    transports: ['polling'],
    pollIntervalMs: 1000,
    fetch: service.fetch,
  });
  clients.push(client);
  const states: { readonly state: ConnectionState; readonly at: number }[] = [];
  client.on('state', (state) => states.push({ state, at: Date.now() }));
  await vi.advanceTimersByTimeAsync(100);
  const opened = client.state;
  service.failNextPoll = true;
  await vi.advanceTimersByTimeAsync(1000);
  const lostAt = states.find(({ state }) => state === 'reconnecting')?.at as number;
  await vi.advanceTimersByTimeAsync(2000);
  const retriedAt = service.polls().find((poll) => poll.at > lostAt)?.at as number;
  return { opened, delay: retriedAt - lostAt, flagReads: service.flagReads().map((read) => read.token), client };
}

describe('the room client and GET /client/feature-flags', () => {
  it.each([
    { variant: 'a 401 (older servers)', stale: refused },
    { variant: 'the anonymous defaults (newer servers)', stale: anonymous },
  ])('reads the project’s curve again once connected when the first read got $variant', async ({ stale }) => {
    // Act
    const outcome = await firstReconnectDelay((token) => (token === 'fresh' ? targeted() : stale()));

    // Assess
    expect(outcome.opened).toBe('polling');
    expect(outcome.flagReads).toEqual(['stale', 'fresh']);
    expect(outcome.delay).toBe(FLUXY.baseBackoffMs - 1);
  });

  it.each([
    { variant: 'a 401', answer: refused },
    { variant: 'the anonymous defaults', answer: anonymous },
    { variant: 'a network error', answer: () => Promise.reject(new TypeError('fetch failed')) },
  ])('connects and backs off on the 1 s / 8 s curve when every read gets $variant', async ({ answer }) => {
    // Act
    const outcome = await firstReconnectDelay(answer);

    // Assess
    expect(outcome.opened).toBe('polling');
    expect(outcome.flagReads).toEqual(['stale', 'fresh']);
    expect(outcome.delay).toBe(999);
    expect(outcome.client.state).toBe('polling');
  });

  it('reads the flags once when the first answer was already the project’s', async () => {
    // Act
    const outcome = await firstReconnectDelay(targeted);

    // Assess
    expect(outcome.flagReads).toEqual(['stale']);
    expect(outcome.delay).toBe(FLUXY.baseBackoffMs - 1);
  });
});

// Only the `ws` package shows a refused upgrade's status and headers, so a 429 read as `rate_limited`
// with its Retry-After proves which class opened the socket: the option's, or `ws` loaded by the SDK
// itself when there is no option and no global WebSocket (Node 20; stubbed away on newer Node).
describe.each([
  { variant: 'the ws class given as the WebSocket option', options: { WebSocket } },
  { variant: 'no WebSocket option and no global WebSocket: ws loaded on demand', options: {}, noGlobal: true },
])('the room client refused a WebSocket upgrade with 429 and Retry-After, $variant', ({ options, noGlobal }) => {
  it('waits Retry-After before the next attempt and reports it as rate_limited', { timeout: 10_000 }, async () => {
    // Prepare: a server that refuses every upgrade the way the service's gateway does
    if (noGlobal) vi.stubGlobal('WebSocket', undefined);
    const upgrades: number[] = [];
    const server = createServer((_request, response) => response.writeHead(404).end());
    servers.push(server);
    server.on('upgrade', (_request, socket) => {
      upgrades.push(Date.now());
      const body = JSON.stringify({ error: { code: 'rate_limited', message: 'Too many connections' } });
      socket.end(
        `HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const states: ConnectionState[] = [];
    const client = createRoomClient({
      baseUrl: `http://127.0.0.1:${port}`,
      roomId: 'lobby',
      token: 'token',
      ...options,
      transports: ['websocket'],
      backoff: { baseBackoffMs: 20, maxBackoffMs: 40 },
      fetch: () => Promise.reject(new Error('no REST in this test')),
    });
    clients.push(client);
    client.on('state', (state) => states.push(state));

    // Act
    const deadline = Date.now() + 5000;
    while (upgrades.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    client.close();

    // Assess
    expect(upgrades).toHaveLength(2);
    expect((upgrades[1] as number) - (upgrades[0] as number)).toBeGreaterThanOrEqual(990);
    expect(states.slice(0, 1)).toEqual(['reconnecting']);
    expect(client.lastError).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 1 });
  });
});

describe('the addresses a room client connects to', () => {
  /** A client whose every attempt fails at once, so it retries; `getToken` gives `t1`, `t2`, ... */
  function retryingClient(options: Partial<Parameters<typeof createRoomClient>[0]>) {
    const sockets: string[] = [];
    const streams: { readonly url: string; readonly headers: Record<string, string> }[] = [];
    class RefusedSocket {
      readonly readyState = 0;
      private readonly listeners: Record<string, ((event: unknown) => void)[]> = {};
      constructor(url: string) {
        sockets.push(url);
        setTimeout(() => {
          for (const listener of this.listeners.close ?? []) listener({ code: 1006 });
        }, 1);
      }
      send() {}
      close() {}
      addEventListener(type: string, listener: (event: unknown) => void) {
        this.listeners[type] = [...(this.listeners[type] ?? []), listener];
      }
    }
    let issued = 0;
    const client = createRoomClient({
      baseUrl: 'https://chat.example.com/',
      roomId: 'lobby room',
      getToken: () => `t${++issued}`,
      WebSocket: RefusedSocket,
      backoff: { baseBackoffMs: 5, maxBackoffMs: 10 },
      fetch: async (input, init) => {
        if (new URL(input).pathname.endsWith('/stream')) {
          streams.push({ url: input, headers: { ...(init?.headers as Record<string, string>) } });
          return json(503, { error: { code: 'internal_error', message: 'Boom' } });
        }
        return new URL(input).pathname === '/client/feature-flags' ? targeted() : json(200, { messages: [], hasMore: false });
      },
      ...options,
    });
    clients.push(client);
    return { sockets, streams, client };
  }

  it('derives the WebSocket and the SSE stream from baseUrl alone, each attempt with a token getToken gave it, in the query', async () => {
    // Prepare
    const { sockets, streams } = retryingClient({ transports: ['websocket', 'sse'], cache: true });

    // Act
    await vi.waitFor(() => expect(streams.length).toBeGreaterThanOrEqual(2), { timeout: 5000 });
    await vi.waitFor(() => expect(sockets.length).toBeGreaterThanOrEqual(2), { timeout: 5000 });

    // Assess
    const token = (url: string) => new URL(url).searchParams.get('token');
    expect(sockets[0]).toMatch(/^wss:\/\/chat\.example\.com\/ws\/rooms\/lobby%20room\?token=t\d+&history=20&cache=1&batch=1$/);
    expect(new URL(sockets[1] as string).searchParams.get('roomId')).toBeNull();
    expect(streams[0]?.url).toMatch(/^https:\/\/chat\.example\.com\/rooms\/lobby%20room\/stream\?token=t\d+$/);
    for (const stream of streams) expect(Object.keys(stream.headers).map((name) => name.toLowerCase())).not.toContain('authorization');
    expect(streams[0]?.headers['last-event-id']).toBe('0');
    const tokens = [...sockets, ...streams.map((stream) => stream.url)].map(token);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('keeps the legacy wsUrl (room in the query) and sseUrl of a deployment without CloudFront', async () => {
    // Prepare
    const { sockets, streams } = retryingClient({
      transports: ['websocket', 'sse'],
      wsUrl: 'wss://abc123.execute-api.eu-west-1.amazonaws.com/prod',
      sseUrl: 'https://xyz.lambda-url.eu-west-1.on.aws/',
    });

    // Act
    await vi.waitFor(() => expect(streams.length).toBeGreaterThanOrEqual(1), { timeout: 5000 });

    // Assess
    expect(sockets[0]).toMatch(
      /^wss:\/\/abc123\.execute-api\.eu-west-1\.amazonaws\.com\/prod\?roomId=lobby\+room&token=t\d+&history=20&batch=1$/,
    );
    expect(streams[0]?.url).toMatch(/^https:\/\/xyz\.lambda-url\.eu-west-1\.on\.aws\/rooms\/lobby%20room\/stream\?token=t\d+$/);
  });
});
