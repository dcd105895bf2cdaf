import { createECDH, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { WebPushTarget } from '#shared/providers/web-push';

/**
 * Push services for web push tests, both on 127.0.0.1: the `web-push-testing` package's server
 * (a browser's push service in miniature: subscriptions with real keys, VAPID verified, payloads
 * decrypted) run in this process, and a server of our own that answers each endpoint with the
 * status a test chooses and records what arrived.
 */

/** A subscription made on the web-push-testing server, with the hash naming it there. */
export interface TestingSubscription extends WebPushTarget {
  readonly clientHash: string;
}

export interface WebPushTesting {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Subscribes as a browser would for the service whose VAPID public key is `applicationServerKey`. */
  subscribe(applicationServerKey: string): Promise<TestingSubscription>;
  /** The payloads the subscription received, decrypted by the server. */
  notifications(subscription: TestingSubscription): Promise<string[]>;
  /** Makes the subscription expired: the server answers its pushes with 410 from now on. */
  expire(subscription: TestingSubscription): Promise<void>;
  close(): Promise<void>;
}

/** The parts of web-push-testing 1.2.2 (`src/server.js`, `src/PushApiModel.js`, CommonJS, untyped) used here. */
interface PushApiModelModule {
  PushApiModel: new () => { notifyUrl: string };
}
type WebPushTestingServerClass = new (
  model: { notifyUrl: string },
  port: number,
) => {
  readonly _app: { listen(port: number, host: string, callback: () => void): Server };
  setRequestHandlers(): void;
};

const require = createRequire(import.meta.url);

/**
 * Starts web-push-testing in this process. Its `startServer()` is not used: it listens on a fixed
 * port, on every interface, and calls `process.exit` on an error; the app is listened on here
 * instead, and the endpoint URL it hands out is set once the port is known. The server keeps its
 * model in a module variable, so only one may run at a time in a process.
 */
export async function startWebPushTesting(): Promise<WebPushTesting> {
  const { PushApiModel } = require('web-push-testing/src/PushApiModel.js') as PushApiModelModule;
  const WebPushTestingServer = require('web-push-testing/src/server.js') as WebPushTestingServerClass;
  const model = new PushApiModel();
  const testing = new WebPushTestingServer(model, 0);
  const server = await new Promise<Server>((resolve) => {
    const listening: Server = testing._app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.notifyUrl = `${url}/notify/`;
  testing.setRequestHandlers();

  async function call<T>(path: string, body: unknown = {}): Promise<T> {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`web-push-testing ${path} answered ${response.status}: ${text}`);
    // `/expire-subscription` answers a plain `OK`.
    return (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as T;
  }

  return {
    url,
    subscribe: async (applicationServerKey) => {
      const { data } = await call<{ data: { endpoint: string; keys: { p256dh: string; auth: string }; clientHash: string } }>(
        '/subscribe',
        {
          applicationServerKey,
        },
      );
      return { endpoint: data.endpoint, keys: data.keys, clientHash: data.clientHash };
    },
    notifications: async (subscription) => {
      const { data } = await call<{ data: { messages: string[] } }>('/get-notifications', { clientHash: subscription.clientHash });
      return data.messages;
    },
    expire: async (subscription) => {
      await call(`/expire-subscription/${subscription.clientHash}`);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RecordedPush {
  /** The full endpoint URL the push was sent to. */
  readonly endpoint: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface StatusPushService {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every push received, in order. */
  readonly requests: readonly RecordedPush[];
  /**
   * A new subscription whose endpoint answers `status` (its path carries it: `/push/<status>/<id>`),
   * with real P-256 and auth keys so a payload can be encrypted for it.
   * @default 201
   */
  subscription(status?: number): WebPushTarget;
  /** Makes an endpoint answer `status` from now on, whatever its path says. */
  setStatus(endpoint: string, status: number): void;
  /** Pushes received by one endpoint. */
  requestsTo(endpoint: string): number;
  close(): Promise<void>;
}

/** The bodies push services answer with, by status (Mozilla's autopush and FCM's web push look like these). */
const ANSWERS: Readonly<Record<number, { headers?: Record<string, string>; body: string }>> = {
  400: { body: JSON.stringify({ code: 400, errno: 110, error: 'Bad Request', message: 'Invalid request' }) },
  401: { body: JSON.stringify({ code: 401, errno: 109, error: 'Unauthorized', message: 'Request did not validate' }) },
  403: {
    headers: { 'content-type': 'text/plain' },
    body: 'the key in the authorization header does not correspond to the sender ID used to subscribe this user',
  },
  404: { body: JSON.stringify({ code: 404, errno: 102, error: 'Not Found', message: 'Request did not validate invalid token' }) },
  410: { body: JSON.stringify({ code: 410, errno: 106, error: 'Gone', message: 'Subscription has unsubscribed or expired' }) },
  429: { headers: { 'retry-after': '60' }, body: JSON.stringify({ code: 429, errno: 202, error: 'Too Many Requests' }) },
  500: { headers: { 'content-type': 'text/plain' }, body: 'Internal Server Error' },
};

/** Starts a push service of our own whose endpoints answer the status each test chooses. */
export async function startStatusPushService(): Promise<StatusPushService> {
  const requests: RecordedPush[] = [];
  const overrides = new Map<string, number>();
  let url = '';

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const endpoint = `${url}${request.url ?? '/'}`;
      requests.push({ endpoint, headers: request.headers, body: Buffer.concat(chunks) });
      const status = overrides.get(endpoint) ?? Number(/^\/push\/(\d{3})\//.exec(request.url ?? '')?.[1] ?? 404);
      if (status === 201)
        return response.writeHead(201, { location: `${url}/message/${randomUUID()}`, ttl: String(request.headers.ttl ?? 0) }).end();
      const answer = ANSWERS[status] ?? { body: '' };
      response.writeHead(status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    subscription: (status = 201) => {
      const browser = createECDH('prime256v1');
      return {
        endpoint: `${url}/push/${status}/${randomUUID()}`,
        keys: { p256dh: browser.generateKeys().toString('base64url'), auth: randomBytes(16).toString('base64url') },
      };
    },
    setStatus: (endpoint, status) => overrides.set(endpoint, status),
    requestsTo: (endpoint) => requests.filter((request) => request.endpoint === endpoint).length,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
