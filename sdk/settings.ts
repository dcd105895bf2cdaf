import { ChatError } from './errors.js';
import type { FetchLike, RoomClientOptions, Transport, WebSocketConstructor } from './types.js';

/** The SDK's default `history`. It is always sent explicitly, so the server's own default (`REALTIME_HISTORY_DEFAULT`) never applies. */
const DEFAULT_HISTORY = 20;
/**
 * Half API Gateway's 10-minute idle timeout, so one lost ping cannot let it close a healthy
 * connection. API Gateway answers pings itself (no function runs), so each costs two WebSocket
 * messages: 24 an hour, about what the connection minutes of that hour cost.
 */
export const DEFAULT_PING_INTERVAL_MS = 5 * 60_000;

/** The options with their defaults applied: what the client, its REST calls and its transports read. */
export interface ClientSettings {
  readonly roomId: string;
  /** Without a trailing slash, as are `sseUrl` and `wsUrl`'s base. */
  readonly baseUrl: string;
  readonly sseUrl: string;
  readonly wsUrl: string | undefined;
  readonly token: string | undefined;
  readonly getToken: (() => string | Promise<string>) | undefined;
  readonly WebSocket: WebSocketConstructor | undefined;
  readonly cache: boolean;
  readonly batch: boolean;
  readonly transports: readonly Transport[];
  readonly fetch: FetchLike;
  /** 0–100, a whole number. */
  readonly history: number;
  readonly pollIntervalMs: number;
  readonly connectTimeoutMs: number;
  readonly ackTimeoutMs: number;
  readonly upgradeIntervalMs: number;
  readonly pingIntervalMs: number;
}

/** Applies the defaults documented on `RoomClientOptions`; throws `missing_credentials` without `token` or `getToken`. */
export function resolveSettings(options: RoomClientOptions): ClientSettings {
  if (!options.token && !options.getToken) throw new ChatError('missing_credentials', 'createRoomClient needs token or getToken');
  return {
    roomId: options.roomId,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    sseUrl: (options.sseUrl ?? options.baseUrl).replace(/\/+$/, ''),
    wsUrl: options.wsUrl,
    token: options.token,
    getToken: options.getToken,
    WebSocket: options.WebSocket,
    cache: options.cache === true,
    batch: options.batch !== false,
    transports: options.transports?.length ? [...options.transports] : ['websocket', 'sse', 'polling'],
    // An arrow, not `globalThis.fetch` itself: browsers refuse a fetch called as another object's method.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    history: Math.min(100, Math.max(0, Math.floor(options.history ?? DEFAULT_HISTORY))),
    pollIntervalMs: options.pollIntervalMs ?? 2000,
    connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    ackTimeoutMs: options.ackTimeoutMs ?? 10_000,
    upgradeIntervalMs: options.upgradeIntervalMs ?? 30_000,
    pingIntervalMs: options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS,
  };
}
