import type { BackoffSettings } from './backoff.js';
import type { ChatError } from './errors.js';

/** A stored message, as every transport and REST route carries it. */
export interface Message {
  /** `createdAtMs × 1000 + slot`: unique in the room and ordered by time. */
  readonly id: number;
  readonly roomId: string;
  readonly userId: string;
  readonly content: string;
  readonly parent_id: number | null;
  readonly attachments: readonly string[];
  readonly clientMessageId: string | null;
  readonly createdAt: string;
  readonly moderation: { readonly label: string; readonly reason: string } | null;
  /** The lifecycle's current state (servers before it leave these out). */
  readonly editedAt?: string | null;
  readonly editCount?: number;
  readonly deletedAt?: string | null;
  readonly reactions?: Readonly<Record<string, number>>;
  readonly pinned?: boolean;
}

/** How a stored message changed (`message_updated` frame; the `message.updated` event's payload). */
export type MessageChange = 'edited' | 'deleted' | 'reaction_added' | 'reaction_removed' | 'pinned' | 'unpinned' | 'transcribed';

/** A `message_updated` frame: who changed which message how, with the fields the change concerns. */
export interface MessageUpdate {
  readonly roomId: string;
  readonly messageId: number;
  readonly change: MessageChange;
  readonly userId: string;
  readonly at: string;
  readonly content?: string;
  readonly editedAt?: string | null;
  readonly editCount?: number;
  readonly deletedAt?: string | null;
  readonly emoji?: string;
  readonly reactions?: Readonly<Record<string, number>>;
  readonly pinned?: boolean;
  readonly transcript?: string | null;
}

/**
 * - `connecting`: the first attempt is under way.
 * - `connected`: a WebSocket is open (messages, presence, events, `trigger`).
 * - `sse`: the WebSocket was refused; messages arrive over the SSE stream.
 * - `polling`: SSE was refused too; messages arrive by polling.
 * - `reconnecting`: the transport was lost (or every transport failed); waiting for the next attempt.
 * - `disconnected`: `close()` was called, or the service refused the credentials or the room (see `lastError`).
 */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'disconnected' | 'sse' | 'polling';

export type Transport = 'websocket' | 'sse' | 'polling';

/** The part of the WHATWG `WebSocket` the SDK uses: browsers' and Node 22's global, or the `ws` package's class. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface RoomClientOptions {
  /**
   * The service's one address, e.g. `http://127.0.0.1:8787` locally or the stack's `BaseUrl` output
   * on AWS (`https://chat.example.com`): REST at `<base>/...`, the WebSocket at
   * `ws(s)://<host>/ws/rooms/<roomId>`, SSE at `<base>/rooms/<roomId>/stream`.
   */
  readonly baseUrl: string;
  /**
   * Legacy: the WebSocket API's own URL (`wss://<api>/<stage>`) of a deployment without CloudFront
   * (`edge: false`); the SDK adds `?roomId=&token=`. Leave it out wherever `baseUrl` serves `/ws/...`.
   * @default `baseUrl` with a `ws(s)` scheme and the path `/ws/rooms/<roomId>`
   */
  readonly wsUrl?: string;
  /**
   * Legacy: the SSE function URL (the stack's `SseUrl` output) of a deployment without CloudFront
   * (`edge: false`). Leave it out wherever `baseUrl` serves `/rooms/<roomId>/stream`.
   * @default baseUrl
   */
  readonly sseUrl?: string;
  readonly roomId: string;
  /** A user JWT. Give this or `getToken`. */
  readonly token?: string;
  /** Called before each connection attempt and request, so a refreshed token is picked up. */
  readonly getToken?: () => string | Promise<string>;
  /** @default globalThis.WebSocket, else (Node 20 has none) the `ws` package's class if it is installed */
  readonly WebSocket?: WebSocketConstructor;
  /**
   * The transports to try, in this order.
   * @default ['websocket', 'sse', 'polling']
   */
  readonly transports?: readonly Transport[];
  /**
   * How many recent messages the first connection delivers (0–100). Always sent to the server
   * (`history=`), so its own default does not apply; reconnects ask for none.
   * @default 20
   */
  readonly history?: number;
  /** Ask the WebSocket for the room's cached server event (`cache=1`), delivered as an `event` with `cached: true`. @default false */
  readonly cache?: boolean;
  /**
   * Ask the WebSocket for batch frames (`batch=1`): in a busy room the server then wraps the frames
   * of a short window into one `{ type: 'batch', frames }` (one WebSocket message instead of one per
   * frame), which the SDK unpacks, so every event still arrives alone and in order. Turn it off only
   * for a server or proxy that refuses the parameter.
   * @default true
   */
  readonly batch?: boolean;
  /** @default 2000 */
  readonly pollIntervalMs?: number;
  /** How long a WebSocket or SSE connection may take to open before the next transport is tried. @default 5000 */
  readonly connectTimeoutMs?: number;
  /** How long a WebSocket send waits for its `ack` before it is retried over REST (same `clientMessageId`). @default 10000 */
  readonly ackTimeoutMs?: number;
  /** How often, while on SSE or polling, to try a WebSocket again; 0 never does. @default 30000 */
  readonly upgradeIntervalMs?: number;
  /**
   * How often to ping over the WebSocket; a socket silent for two intervals is taken as dead and
   * replaced. Shorter finds a dead network sooner and costs more WebSocket messages on AWS.
   * @default 300000 (5 minutes, half API Gateway's idle timeout)
   */
  readonly pingIntervalMs?: number;
  /** Overrides the reconnect curve instead of reading it from `GET /client/feature-flags`. */
  readonly backoff?: BackoffSettings;
  /** @default globalThis.fetch */
  readonly fetch?: FetchLike;
}

export interface SendOptions {
  /** Idempotency key in the room. @default a random one, so a retried send is stored once */
  readonly clientMessageId?: string;
  readonly parent_id?: number;
  readonly attachments?: readonly string[];
}

export interface Presence {
  readonly members: readonly string[];
  readonly subscriptionCount: number;
}

export interface MemberChange {
  readonly userId: string;
  readonly subscriptionCount: number;
}

/** A server event (`POST /events`) or another connection's `client-*` event. */
export interface RoomEvent {
  readonly roomId: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
  /** The sender of a `client-*` event. */
  readonly userId?: string;
  readonly socketId?: string;
  /** The room's cached event replayed on connect (`cache: true`). */
  readonly cached?: boolean;
}

/** A `handoff` frame: a human took the room over from AI (`human_active`), or handed it back (`completed`). */
export interface HandoffChange {
  readonly roomId: string;
  readonly handoffId: string;
  readonly state: 'human_active' | 'completed';
  readonly agentTaskId?: string;
  readonly agentId?: string | null;
  readonly takenBy?: string;
  readonly disposition?: string;
}

/** An `agentTyping` frame: an AI agent started (or stopped) writing a reply; renewed every few seconds while it works. */
export interface AgentTyping {
  readonly roomId: string;
  readonly agentId: string;
  readonly userId: string;
  readonly typing: boolean;
}

export interface RoomClientEvents {
  state: (state: ConnectionState, previous: ConnectionState) => void;
  message: (message: Message) => void;
  /** A stored message was edited, deleted, reacted to, pinned or transcribed (WebSocket only; SSE and polling see it in history). */
  message_updated: (update: MessageUpdate) => void;
  presence: (presence: Presence) => void;
  member_joined: (change: MemberChange) => void;
  member_left: (change: MemberChange) => void;
  subscription_count: (count: { readonly subscriptionCount: number }) => void;
  event: (event: RoomEvent) => void;
  /** A handoff started or completed (WebSocket only; `GET /rooms/{roomId}/handoff` reads the state). */
  handoff: (handoff: HandoffChange) => void;
  /** An AI agent is writing a reply, or stopped (WebSocket only). */
  agent_typing: (typing: AgentTyping) => void;
  error: (error: ChatError) => void;
}

export interface RoomClient {
  readonly state: ConnectionState;
  readonly roomId: string;
  /** Users with at least one connection to the room (WebSocket only; empty on SSE and polling). */
  readonly members: readonly string[];
  readonly subscriptionCount: number;
  /** This WebSocket connection's id (pass it as `excludeSocketId`); `undefined` off the WebSocket. */
  readonly socketId: string | undefined;
  /** The newest message id delivered. */
  readonly lastMessageId: number | undefined;
  /** The error that ended the client (`disconnected`), or the last one a transport failed with. */
  readonly lastError: ChatError | undefined;
  on<K extends keyof RoomClientEvents>(event: K, listener: RoomClientEvents[K]): () => void;
  /**
   * Sends a message: a `message` frame answered by `ack` on the WebSocket, `POST /rooms/{roomId}/messages`
   * otherwise. Resolves with the stored message (also delivered once through `message`); rejects
   * with a `ChatError` carrying `code` and, for `rate_limited`, `retryAfter`.
   */
  send(content: string, options?: SendOptions): Promise<Message>;
  /**
   * Sends a `client-*` event to the room's other connections (WebSocket only; throws `not_connected`
   * otherwise). Returns the frame's `ref`; a refusal arrives as an `error` event with that `ref`.
   */
  trigger(event: string, data?: Record<string, unknown>): string;
  /** Stops every transport and timer; the state becomes `disconnected`. */
  close(): void;
}
