import { createHash, createHmac } from 'node:crypto';
import Pusher, { type Channel, type Options } from 'pusher-js';
import WebSocket from 'ws';
import { api, runtime } from './api';

/** A project's Pusher app as `POST /admin/pusher-app` answers it. */
export interface PusherAppKeys {
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
}

/** Creates (or rotates) the project's Pusher app. */
export async function createPusherApp(apiKey: string): Promise<PusherAppKeys> {
  const created = await api('/admin/pusher-app', { apiKey, method: 'POST' });
  if (created.status !== 201) throw new Error(`pusher app creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/**
 * The query string of a trigger request as Pusher's server libraries sign it, computed here with
 * node:crypto: `auth_*` and `body_md5`, then `auth_signature`, the HMAC-SHA256 of
 * `POST\n<path>\n<sorted params>`.
 */
export function pusherSignedQuery(
  app: Pick<PusherAppKeys, 'key' | 'secret'>,
  path: string,
  body: string,
  options: { timestamp?: number; md5?: string; tamper?: boolean; key?: string } = {},
): string {
  const params: Record<string, string> = {
    auth_key: options.key ?? app.key,
    auth_timestamp: String(options.timestamp ?? Math.floor(Date.now() / 1000)),
    auth_version: '1.0',
    body_md5: options.md5 ?? createHash('md5').update(body).digest('hex'),
  };
  const query = Object.keys(params)
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
  let signature = createHmac('sha256', app.secret).update(`POST\n${path}\n${query}`).digest('hex');
  if (options.tamper) signature = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
  return `${query}&auth_signature=${signature}`;
}

/** A signed trigger request to `/apps/<appId>/<endpoint>` with `body` as sent. */
export function sendSignedTrigger(
  app: PusherAppKeys,
  endpoint: 'events' | 'batch_events',
  body: string,
  options: Parameters<typeof pusherSignedQuery>[3] & { appId?: string } = {},
) {
  const path = `/apps/${options.appId ?? app.appId}/${endpoint}`;
  return api(`${path}?${pusherSignedQuery(app, path, body, options)}`, { rawBody: body, headers: { 'content-type': 'application/json' } });
}

/**
 * Pusher-protocol clients for the compatibility suites: the real pusher-js (its Node build, with
 * its own WebSocket and XHR) pointed at the shared runtime, and a raw socket that speaks the
 * protocol frame by frame, with signatures computed here, independently of the service's code.
 */

const gateway = () => new URL(runtime().baseUrl);

/** pusher-js options for the runtime: its host and port, plain ws, `/auth/channel` with the user's token. */
export function pusherOptions(token: string, extra: Partial<Options> = {}): Options {
  const { hostname, port } = gateway();
  return {
    cluster: 'local',
    wsHost: hostname,
    wsPort: Number(port),
    forceTLS: false,
    enabledTransports: ['ws'],
    disableStats: true,
    channelAuthorization: {
      endpoint: `${runtime().baseUrl}/auth/channel`,
      transport: 'ajax',
      headers: { Authorization: `Bearer ${token}` },
    },
    ...extra,
  } as Options;
}

/** A pusher-js client, connected. */
export async function connectPusher(key: string, token: string, extra: Partial<Options> = {}): Promise<Pusher> {
  const client = new Pusher(key, pusherOptions(token, extra));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pusher-js did not connect: ${client.connection.state}`)), 10_000);
    client.connection.bind('connected', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return client;
}

/** Subscribes and waits for `pusher:subscription_succeeded` (its data) or the error. */
export function subscribed(client: Pusher, name: string): Promise<{ channel: Channel; data: any }> {
  const channel = client.subscribe(name);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no subscription answer for ${name}`)), 10_000);
    channel.bind('pusher:subscription_succeeded', (data: unknown) => {
      clearTimeout(timer);
      resolve({ channel, data });
    });
    channel.bind('pusher:subscription_error', (error: unknown) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`subscription to ${name} refused`), { detail: error }));
    });
  });
}

/** The next occurrence of `event` on a channel (or the connection's global events), within `timeoutMs`. */
export function nextEvent(channel: Pick<Channel, 'bind' | 'unbind'>, event: string, timeoutMs = 10_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const handler = (data: unknown) => {
      clearTimeout(timer);
      channel.unbind(event, handler);
      resolve(data);
    };
    const timer = setTimeout(() => {
      channel.unbind(event, handler);
      reject(new Error(`no ${event} within ${timeoutMs} ms`));
    }, timeoutMs);
    channel.bind(event, handler);
  });
}

/** Every occurrence of `event` on a channel, recorded from now on. */
export function record(channel: Pick<Channel, 'bind'>, event: string): any[] {
  const seen: any[] = [];
  channel.bind(event, (data: unknown) => seen.push(data));
  return seen;
}

/** `<key>:<hex HMAC-SHA256>` of `socket_id:channel[:channel_data]`, as Pusher's docs define it. */
export function independentChannelAuth(
  app: Pick<PusherAppKeys, 'key' | 'secret'>,
  socketId: string,
  channel: string,
  channelData?: string,
): string {
  const signed = channelData === undefined ? `${socketId}:${channel}` : `${socketId}:${channel}:${channelData}`;
  return `${app.key}:${createHmac('sha256', app.secret).update(signed).digest('hex')}`;
}

export interface PusherFrame {
  readonly event: string;
  readonly channel?: string;
  readonly data?: any;
}

/** A raw protocol-7 socket: every frame kept, `data` strings parsed as pusher-js would. */
export class RawPusherSocket {
  readonly frames: PusherFrame[] = [];
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      if (typeof frame.data === 'string') {
        try {
          frame.data = JSON.parse(frame.data);
        } catch {
          // Left as sent: the data of an event may be any string.
        }
      }
      this.frames.push(frame);
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('close', () => {
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Opens `/app/<key>` with pusher-js's query (on the shared runtime unless told); rejects with the refusal's status when the upgrade is refused. */
  static open(
    key: string,
    query = 'protocol=7&client=js&version=8.6.0&flash=false',
    baseUrl = runtime().baseUrl,
  ): Promise<RawPusherSocket> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/app/${encodeURIComponent(key)}?${query}`;
    const socket = new WebSocket(url);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(new RawPusherSocket(socket)));
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        response.on('end', () =>
          reject(Object.assign(new Error(`refused: ${response.statusCode}`), { status: response.statusCode, body })),
        );
      });
      socket.once('error', reject);
    });
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame from now or already received that matches, within `timeoutMs`. */
  async next(match: (frame: PusherFrame) => boolean, timeoutMs = 10_000): Promise<PusherFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(match);
      if (found) return found;
      if (Date.now() > deadline || this.socket.readyState === WebSocket.CLOSED) {
        throw new Error(`no matching frame; got ${JSON.stringify(this.frames).slice(0, 600)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(10, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** `socket_id` of `pusher:connection_established`. */
  async socketId(): Promise<string> {
    return (await this.next((frame) => frame.event === 'pusher:connection_established')).data.socket_id as string;
  }

  /** Subscribes `userId` to `channel` with an auth signed here, as `/auth/channel` would sign it. */
  async subscribeSigned(app: Pick<PusherAppKeys, 'key' | 'secret'>, channel: string, userId: string): Promise<void> {
    const channelData = JSON.stringify({ user_id: userId });
    this.send({
      event: 'pusher:subscribe',
      data: { channel, auth: independentChannelAuth(app, await this.socketId(), channel, channelData), channel_data: channelData },
    });
  }

  /** Sends a frame and waits for the ping's pong: every answer to what was sent before has arrived. */
  async settle(): Promise<void> {
    const pongs = this.frames.filter((frame) => frame.event === 'pusher:pong').length;
    this.send({ event: 'pusher:ping', data: {} });
    await this.next(() => this.frames.filter((frame) => frame.event === 'pusher:pong').length > pongs);
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}
