import { type BackoffSettings, backoffDelay, DEFAULT_BACKOFF, parseBackoff } from './backoff';
import { ChatError, classify, errorFromBody, parseRetryAfter } from './errors';
import { SeenIds } from './message-ids';
import { SseParser } from './sse-parser';
import type {
  ConnectionState,
  FetchLike,
  Message,
  RoomClient,
  RoomClientEvents,
  RoomClientOptions,
  RoomEvent,
  SendOptions,
  Transport,
  WebSocketConstructor,
  WebSocketLike,
} from './types';

type Timer = ReturnType<typeof setTimeout>;

const OPEN = 1;
const PAGE_SIZE = 100;
/** A resume pages through at most this many pages (100,000 messages) before going live. */
const MAX_CATCH_UP_PAGES = 1000;
/** The SDK's default `history`. It is always sent explicitly, so the server's own default (`REALTIME_HISTORY_DEFAULT`) never applies. */
const DEFAULT_HISTORY = 20;
/** How long the first WebSocket connection waits for the `history` frame it asked for before reading history over REST. */
const HISTORY_FRAME_WAIT_MS = 3000;
const REQUEST_TIMEOUT_MS = 15_000;
const FLAGS_TIMEOUT_MS = 5000;
/** A WebSocket that has sent nothing (not even a `pong`) for two ping intervals is dead. */
const PING_INTERVAL_MS = 30_000;
/** Three missed 15 s heartbeats: the SSE stream is dead even if the socket looks open. */
const SSE_IDLE_TIMEOUT_MS = 45_000;
const DEFAULT_SSE_RETRY_MS = 1000;
const CLIENT_EVENT_NAME = /^client-[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A live view of one room: connects over the best transport that works (WebSocket, then SSE, then
 * polling), reconnects with backoff, and delivers every message of the room once, in id order, across
 * reconnects and transport changes.
 *
 * @example
 * const room = createRoomClient({ baseUrl, roomId: 'lobby', token, WebSocket }); // `ws` in Node 20
 * room.on('message', (message) => render(message));
 * await room.send('hello');
 */
export function createRoomClient(options: RoomClientOptions): RoomClient {
  return new RoomConnection(options);
}

type Attempt = { readonly open: true } | { readonly open: false; readonly error: ChatError };

interface PendingSend {
  readonly input: WireMessageInput;
  readonly resolve: (message: Message) => void;
  readonly reject: (error: unknown) => void;
  timer: Timer | undefined;
}

interface WireMessageInput {
  readonly content: string;
  readonly clientMessageId: string;
  readonly parent_id?: number;
  readonly attachments?: readonly string[];
}

/** A WebSocket's first moments: live messages wait here until the replay (history or catch-up) is merged in. */
interface SocketSync {
  /** The `history` the socket asked for: the server sends a `history` frame only when it is above 0. */
  readonly history: number;
  readonly buffer: Message[];
  frame: Message[] | undefined;
  wake: (() => void) | undefined;
}

interface Page {
  readonly messages: Message[];
  readonly hasMore: boolean;
}

const failed = (error: ChatError): Attempt => ({ open: false, error });

function toChatError(error: unknown, code = 'network_error'): ChatError {
  if (error instanceof ChatError) return error;
  return new ChatError(code, error instanceof Error ? error.message : String(error), { cause: error });
}

function randomId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return crypto?.randomUUID ? `c-${crypto.randomUUID()}` : `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/** The HTTP status of a refused upgrade, from the `error` event of a `ws` socket without an `unexpected-response` listener. */
function refusalStatus(event: unknown): number | undefined {
  const text = `${(event as { message?: unknown })?.message ?? ''} ${(event as { error?: { message?: unknown } })?.error?.message ?? ''}`;
  const status = /Unexpected server response: (\d{3})/.exec(text)?.[1];
  return status ? Number(status) : undefined;
}

/** A refused upgrade: `rate_limited` for a 429 (with `retryAfter` when the response could be read), else `websocket_refused`. */
function refusalError(status: number, retryAfter?: number): ChatError {
  return new ChatError(status === 429 ? 'rate_limited' : 'websocket_refused', `The WebSocket upgrade was refused with HTTP ${status}`, {
    status,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
}

/** The response of a refused upgrade as the `ws` package's `unexpected-response` event gives it (Node's `IncomingMessage`). */
interface RefusedUpgrade {
  readonly statusCode?: number;
  readonly headers?: Record<string, string | string[] | undefined>;
}

/** A `ws` socket: an EventEmitter besides the WHATWG interface. */
type EmitterSocket = WebSocketLike & { on?: (event: string, listener: (...args: any[]) => void) => unknown };

const isMessage = (value: unknown): value is Message => typeof (value as Message | null)?.id === 'number';

class RoomConnection implements RoomClient {
  readonly roomId: string;
  private current: ConnectionState = 'connecting';
  private readonly listeners = new Map<keyof RoomClientEvents, Set<(...args: any[]) => void>>();
  private readonly seen = new SeenIds();
  /**
   * Replays (history, catch-up pages, SSE, polling) never deliver ids below this: the start of the
   * window the first connection delivered. Live WebSocket frames are exempt (a backdated import is
   * broadcast live with an old id), but not from the forget horizon of `seen`.
   */
  private floor: number | undefined;
  private readonly baseUrl: string;
  private readonly sseUrl: string;
  private readonly transports: readonly Transport[];
  private readonly fetchImpl: FetchLike;
  private readonly historySize: number;
  private readonly pollIntervalMs: number;
  private readonly connectTimeoutMs: number;
  private readonly ackTimeoutMs: number;
  private readonly upgradeIntervalMs: number;
  private backoff: Promise<BackoffSettings>;
  /** The reconnect curve is the project's: given as an option, or read with a token the service accepted (`flagship: true`). */
  private backoffTargeted: boolean;
  private backoffRefreshed = false;
  private closed = false;
  /** Failed attempts since the last transport opened: the backoff exponent. */
  private attempt = 0;
  private authRetried = false;
  /** Bumped whenever the active transport is torn down: callbacks of an older one see the change and stop. */
  private generation = 0;
  private socket: WebSocketLike | undefined;
  private sync: SocketSync | undefined;
  private sseAbort: AbortController | undefined;
  private retryTimer: Timer | undefined;
  private pollTimer: Timer | undefined;
  private upgradeTimer: Timer | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private lastFrameAt = 0;
  private readonly pending = new Map<string, PendingSend>();
  private refCounter = 0;
  private currentMembers: string[] = [];
  private count = 0;
  private currentSocketId: string | undefined;
  private error: ChatError | undefined;

  constructor(private readonly options: RoomClientOptions) {
    if (!options.token && !options.getToken) throw new ChatError('missing_credentials', 'createRoomClient needs token or getToken');
    this.roomId = options.roomId;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.sseUrl = (options.sseUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.transports = options.transports?.length ? [...options.transports] : ['websocket', 'sse', 'polling'];
    this.fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.historySize = Math.min(100, Math.max(0, Math.floor(options.history ?? DEFAULT_HISTORY)));
    this.pollIntervalMs = options.pollIntervalMs ?? 2000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 10_000;
    this.upgradeIntervalMs = options.upgradeIntervalMs ?? 30_000;
    this.backoffTargeted = options.backoff !== undefined;
    this.backoff = options.backoff ? Promise.resolve(options.backoff) : this.loadBackoff().then((settings) => settings ?? DEFAULT_BACKOFF);
    void this.cycle();
  }

  get state(): ConnectionState {
    return this.current;
  }

  get members(): readonly string[] {
    return [...this.currentMembers];
  }

  get subscriptionCount(): number {
    return this.count;
  }

  get socketId(): string | undefined {
    return this.currentSocketId;
  }

  get lastMessageId(): number | undefined {
    return this.seen.lastSeenId;
  }

  get lastError(): ChatError | undefined {
    return this.error;
  }

  on<K extends keyof RoomClientEvents>(event: K, listener: RoomClientEvents[K]): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  async send(content: string, options: SendOptions = {}): Promise<Message> {
    if (this.closed) throw new ChatError('closed', 'The room client is closed');
    const clientMessageId = options.clientMessageId ?? randomId();
    const input: WireMessageInput = {
      content,
      clientMessageId,
      ...(options.parent_id === undefined ? {} : { parent_id: options.parent_id }),
      ...(options.attachments === undefined ? {} : { attachments: [...options.attachments] }),
    };
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN || this.pending.has(clientMessageId)) return this.postMessage(input);
    return new Promise<Message>((resolve, reject) => {
      const pending: PendingSend = { input, resolve, reject, timer: undefined };
      // The server answers a frame it cannot parse without the clientMessageId; REST (same
      // clientMessageId, so stored once) then gives the real answer.
      pending.timer = setTimeout(() => this.resendOverRest(pending), this.ackTimeoutMs);
      this.pending.set(clientMessageId, pending);
      try {
        socket.send(JSON.stringify({ type: 'message', ...input }));
      } catch {
        this.resendOverRest(pending);
      }
    });
  }

  trigger(event: string, data: Record<string, unknown> = {}): string {
    if (!CLIENT_EVENT_NAME.test(event)) {
      throw new ChatError('validation_failed', 'Client events are named client-<1-64 characters of A-Z a-z 0-9 _ . : ->');
    }
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN) throw new ChatError('not_connected', 'Client events need the WebSocket transport');
    this.refCounter += 1;
    const ref = `r${this.refCounter}`;
    socket.send(JSON.stringify({ type: event, data, ref }));
    return ref;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.teardown(new ChatError('closed', 'The room client was closed'));
    this.setState('disconnected');
  }

  // --- Connection cycle -------------------------------------------------------------------------

  /** One pass over the transports, best first; the first that opens wins. */
  private async cycle(): Promise<void> {
    this.teardown();
    const generation = this.generation;
    for (const transport of this.transports) {
      if (this.closed || generation !== this.generation) return;
      let outcome: Attempt;
      try {
        outcome =
          transport === 'websocket'
            ? await this.openWebSocket(generation)
            : transport === 'sse'
              ? await this.openSse(generation)
              : await this.startPolling(generation);
      } catch (error) {
        outcome = failed(toChatError(error));
      }
      if (this.closed || generation !== this.generation) return;
      if (outcome.open) {
        this.attempt = 0;
        this.authRetried = false;
        this.refreshBackoff();
        return;
      }
      this.error = outcome.error;
      const kind = classify(outcome.error);
      if (kind === 'fatal') {
        // An expired token may be renewed by getToken: one more attempt with a fresh one.
        if (outcome.error.status === 401 && this.options.getToken && !this.authRetried) {
          this.authRetried = true;
          this.reconnect();
          return;
        }
        this.fail(outcome.error);
        return;
      }
      if (kind === 'rate_limited') {
        this.reconnect((outcome.error.retryAfter ?? 0) * 1000);
        return;
      }
    }
    // Every transport failed: most likely the service is unreachable, so wait and start over with the best one.
    this.reconnect();
  }

  /** `reconnecting`, then a new cycle after the backoff delay (at least `minDelayMs`). */
  private reconnect(minDelayMs = 0): void {
    if (this.closed) return;
    this.teardown();
    this.setState('reconnecting');
    const generation = this.generation;
    void this.backoff.then((settings) => {
      if (this.closed || generation !== this.generation) return;
      const delay = Math.max(minDelayMs, backoffDelay(this.attempt, settings));
      this.attempt += 1;
      this.retryTimer = setTimeout(() => void this.cycle(), delay);
    });
  }

  /** An open transport failed. */
  private lost(error?: ChatError, minDelayMs = 0): void {
    if (this.closed) return;
    if (error) this.error = error;
    this.reconnect(minDelayMs);
  }

  /** The service refused the credentials or the room: no retry. */
  private fail(error: ChatError): void {
    if (this.closed) return;
    this.closed = true;
    this.error = error;
    this.teardown(error);
    this.setState('disconnected');
    this.emit('error', error);
  }

  /**
   * Stops the active transport and its timers. Sends waiting for an `ack` go over REST with the same
   * clientMessageId (stored once either way), or fail with `reason` when the client is ending.
   */
  private teardown(reason?: ChatError): void {
    this.generation += 1;
    for (const timer of [this.retryTimer, this.pollTimer, this.upgradeTimer]) if (timer) clearTimeout(timer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.retryTimer = this.pollTimer = this.upgradeTimer = this.pingTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    this.sync = undefined;
    this.currentSocketId = undefined;
    if (socket) {
      try {
        socket.close(1000, 'client');
      } catch {
        // Already closing.
      }
    }
    this.sseAbort?.abort();
    this.sseAbort = undefined;
    for (const pending of [...this.pending.values()]) {
      if (reason) {
        this.pending.delete(pending.input.clientMessageId);
        if (pending.timer) clearTimeout(pending.timer);
        pending.reject(reason);
      } else {
        this.resendOverRest(pending);
      }
    }
  }

  private setState(next: ConnectionState): void {
    const previous = this.current;
    if (previous === next) return;
    this.current = next;
    if (next !== 'connected') {
      // Presence comes with the WebSocket only; a new connection brings a fresh snapshot.
      this.currentMembers = [];
      this.count = 0;
    }
    this.emit('state', next, previous);
  }

  // --- WebSocket ---------------------------------------------------------------------------------

  private async openWebSocket(generation: number): Promise<Attempt> {
    const token = await this.token();
    if (this.closed || generation !== this.generation) return failed(new ChatError('superseded', 'Superseded'));
    const history = this.historyToAsk();
    const refusal = await this.connectSocket(token, history, (socket) => {
      if (this.closed || generation !== this.generation) return false;
      this.adopt(socket, history);
      return true;
    });
    if (!refusal) return { open: true };
    // A refusal the SDK can read (401, 403, 404): ask REST why, with the service's error code.
    if (refusal.status !== undefined && classify(refusal) === 'fatal') {
      try {
        await this.request('GET', `/rooms/${encodeURIComponent(this.roomId)}/messages?limit=1`);
      } catch (error) {
        return failed(toChatError(error));
      }
      return failed(new ChatError('websocket_refused', `The WebSocket upgrade was refused with HTTP ${refusal.status}`));
    }
    return failed(refusal);
  }

  /**
   * Opens a WebSocket. `onOpen` runs inside the `open` event, so the socket's listeners are in place
   * before its first frame; it returns false to discard the socket. Resolves with the failure, if any.
   */
  private connectSocket(token: string, history: number, onOpen: (socket: WebSocketLike) => boolean): Promise<ChatError | undefined> {
    const Constructor: WebSocketConstructor | undefined =
      this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Constructor) {
      return Promise.resolve(new ChatError('websocket_unavailable', 'No WebSocket implementation: pass the WebSocket option'));
    }
    return new Promise((resolve) => {
      let settled = false;
      let socket: WebSocketLike;
      const settle = (error: ChatError | undefined) => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        resolve(error);
        return true;
      };
      const timer = setTimeout(() => {
        if (settle(new ChatError('connect_timeout', `The WebSocket did not open within ${this.connectTimeoutMs} ms`))) socket.close();
      }, this.connectTimeoutMs);
      try {
        socket = new Constructor(this.webSocketUrl(token, history));
      } catch (error) {
        settle(toChatError(error, 'websocket_failed'));
        return;
      }
      // The `ws` package shows a refused upgrade's response, headers included (Retry-After on a 429);
      // with a listener it leaves aborting the handshake to it. Browsers hide the response: only `error` fires.
      const emitter = socket as EmitterSocket;
      if (typeof emitter.on === 'function') {
        emitter.on('unexpected-response', (_request: unknown, response: RefusedUpgrade) => {
          const header = response?.headers?.['retry-after'];
          const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header);
          settle(refusalError(response?.statusCode ?? 0, retryAfter));
          try {
            socket.close();
          } catch {
            // Already aborted.
          }
        });
      }
      socket.addEventListener('open', () => {
        if (settled) return;
        if (onOpen(socket)) settle(undefined);
        else {
          settle(new ChatError('superseded', 'Superseded'));
          socket.close();
        }
      });
      socket.addEventListener('error', (event) => {
        const status = refusalStatus(event);
        settle(status === undefined ? new ChatError('websocket_failed', 'The WebSocket failed to open') : refusalError(status));
      });
      socket.addEventListener('close', (event) => {
        settle(new ChatError('websocket_failed', `The WebSocket closed before opening (${(event as { code?: number })?.code ?? '?'})`));
      });
    });
  }

  /**
   * The `history` a new socket asks for: the client's `history` on the first connection, 0 once a
   * timeline has started (the REST catch-up from the last id seen covers the gap; a `history` frame
   * would only bring old messages again).
   */
  private historyToAsk(): number {
    return this.seen.lastSeenId === undefined ? this.historySize : 0;
  }

  private webSocketUrl(token: string, history: number): string {
    const query = new URLSearchParams();
    if (this.options.wsUrl) query.set('roomId', this.roomId);
    query.set('token', token);
    // Always explicit: the server's default may differ from the SDK's.
    query.set('history', String(history));
    if (this.options.cache) query.set('cache', '1');
    if (this.options.wsUrl) {
      const url = this.options.wsUrl;
      return `${url}${url.includes('?') ? '&' : '?'}${query}`;
    }
    return `${this.baseUrl.replace(/^http/, 'ws')}/ws/rooms/${encodeURIComponent(this.roomId)}?${query}`;
  }

  /** The socket opened: it becomes the transport. Live messages wait for the replay before they are delivered. */
  private adopt(socket: WebSocketLike, history: number): void {
    const generation = this.generation;
    this.socket = socket;
    this.lastFrameAt = Date.now();
    const sync: SocketSync = { history, buffer: [], frame: undefined, wake: undefined };
    this.sync = sync;
    socket.addEventListener('message', (event) => {
      if (this.socket !== socket) return;
      const data = (event as { data?: unknown }).data;
      this.onFrame(typeof data === 'string' ? data : String(data));
    });
    socket.addEventListener('close', (event) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.lost(new ChatError('connection_lost', `The WebSocket closed (${(event as { code?: number })?.code ?? '?'})`));
    });
    this.pingTimer = setInterval(() => {
      if (this.socket !== socket) return;
      if (Date.now() - this.lastFrameAt > 2 * PING_INTERVAL_MS) {
        this.lost(new ChatError('connection_lost', 'The WebSocket stopped answering pings'));
        return;
      }
      try {
        socket.send(JSON.stringify({ type: 'ping' }));
      } catch {
        // Closing: the close event reconnects.
      }
    }, PING_INTERVAL_MS);
    this.setState('connected');
    void this.replay(sync, generation);
  }

  /**
   * First connection: the `history` frame it asked for (or REST when it does not come, or when it
   * asked for none). Later ones: a REST catch-up from the last id seen, paged to the end. Then the
   * buffered live messages, merged.
   */
  private async replay(sync: SocketSync, generation: number): Promise<void> {
    let replayed: Message[];
    try {
      if (this.seen.lastSeenId === undefined) {
        // history=0: the server sends no frame, so there is nothing to wait for.
        const frame = sync.history > 0 ? await this.waitForHistory(sync) : undefined;
        if (generation !== this.generation) return;
        if (frame) {
          this.startWindow(frame);
          replayed = frame;
        } else {
          replayed = await this.initialLoad();
        }
      } else {
        replayed = await this.catchUp(generation);
        if (sync.frame) replayed.push(...sync.frame);
      }
    } catch (error) {
      if (generation !== this.generation) return;
      this.onTransportError(toChatError(error));
      return;
    }
    if (this.closed || generation !== this.generation) return;
    this.sync = undefined;
    this.deliver(replayed, sync.buffer);
  }

  private waitForHistory(sync: SocketSync): Promise<Message[] | undefined> {
    if (sync.frame) return Promise.resolve(sync.frame);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        sync.wake = undefined;
        resolve(undefined);
      }, HISTORY_FRAME_WAIT_MS);
      sync.wake = () => {
        clearTimeout(timer);
        sync.wake = undefined;
        resolve(sync.frame);
      };
    });
  }

  private onFrame(raw: string): void {
    let frame: Record<string, any>;
    try {
      frame = JSON.parse(raw);
    } catch {
      return;
    }
    if (!frame || typeof frame.type !== 'string') return;
    this.lastFrameAt = Date.now();
    switch (frame.type) {
      case 'connected':
        if (typeof frame.socketId === 'string') this.currentSocketId = frame.socketId;
        break;
      case 'subscription_succeeded':
      case 'presence':
        if (Array.isArray(frame.members)) this.currentMembers = frame.members.filter((member: unknown) => typeof member === 'string');
        if (typeof frame.subscriptionCount === 'number') this.count = frame.subscriptionCount;
        this.emit('presence', { members: this.members, subscriptionCount: this.count });
        break;
      case 'member_joined':
      case 'member_left': {
        if (typeof frame.userId !== 'string') break;
        const userId: string = frame.userId;
        this.currentMembers = this.currentMembers.filter((member) => member !== userId);
        if (frame.type === 'member_joined') this.currentMembers.push(userId);
        if (typeof frame.subscriptionCount === 'number') this.count = frame.subscriptionCount;
        this.emit(frame.type as 'member_joined' | 'member_left', { userId, subscriptionCount: this.count });
        break;
      }
      case 'subscription_count':
        if (typeof frame.subscriptionCount === 'number') this.count = frame.subscriptionCount;
        this.emit('subscription_count', { subscriptionCount: this.count });
        break;
      case 'history': {
        const messages: Message[] = Array.isArray(frame.messages) ? frame.messages.filter(isMessage) : [];
        const sync = this.sync;
        if (sync && !sync.frame) {
          sync.frame = messages;
          sync.wake?.();
        } else {
          this.deliver(messages, []);
        }
        break;
      }
      case 'message':
        if (isMessage(frame.message)) this.deliverLive(frame.message);
        break;
      case 'ack':
        this.onAck(frame);
        break;
      case 'error':
        this.onErrorFrame(frame);
        break;
      case 'event': {
        const { type: _type, ...event } = frame;
        this.emit('event', event as RoomEvent);
        break;
      }
      default:
      // `pong`, `cache_miss` and frames of newer servers.
    }
  }

  private onAck(frame: Record<string, any>): void {
    const message = isMessage(frame.message) ? frame.message : undefined;
    if (message) this.deliverLive(message);
    const pending = typeof frame.clientMessageId === 'string' ? this.pending.get(frame.clientMessageId) : undefined;
    if (!pending) return;
    this.pending.delete(pending.input.clientMessageId);
    if (pending.timer) clearTimeout(pending.timer);
    if (message) pending.resolve(message);
    else this.resendOverRest(pending);
  }

  private onErrorFrame(frame: Record<string, any>): void {
    const error = errorFromBody(frame, undefined);
    const detailed = new ChatError(error.code, error.message, {
      ...(typeof frame.retryAfter === 'number' ? { retryAfter: frame.retryAfter } : {}),
      ...(error.details === undefined ? {} : { details: error.details }),
      ...(typeof frame.ref === 'string' ? { ref: frame.ref } : {}),
    });
    const pending = typeof frame.clientMessageId === 'string' ? this.pending.get(frame.clientMessageId) : undefined;
    if (pending) {
      this.pending.delete(pending.input.clientMessageId);
      if (pending.timer) clearTimeout(pending.timer);
      pending.reject(detailed);
      return;
    }
    this.emit('error', detailed);
  }

  private resendOverRest(pending: PendingSend): void {
    this.pending.delete(pending.input.clientMessageId);
    if (pending.timer) clearTimeout(pending.timer);
    pending.timer = undefined;
    this.postMessage(pending.input).then(pending.resolve, pending.reject);
  }

  // --- SSE ---------------------------------------------------------------------------------------

  private async openSse(generation: number): Promise<Attempt> {
    if (this.seen.lastSeenId === undefined) this.deliver(await this.initialLoad(), []);
    if (this.closed || generation !== this.generation) return failed(new ChatError('superseded', 'Superseded'));
    const token = await this.token();
    const controller = new AbortController();
    this.sseAbort = controller;
    const timer = setTimeout(() => controller.abort(), this.connectTimeoutMs);
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.sseUrl}/rooms/${encodeURIComponent(this.roomId)}/stream`, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'text/event-stream',
          'last-event-id': String(this.seen.resumeAfter() ?? 0),
        },
        signal: controller.signal,
      });
    } catch (error) {
      return failed(new ChatError('network_error', `The SSE stream did not open: ${(error as Error).message}`, { cause: error }));
    } finally {
      clearTimeout(timer);
    }
    if (this.closed || generation !== this.generation) {
      controller.abort();
      return failed(new ChatError('superseded', 'Superseded'));
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !contentType.includes('text/event-stream') || !response.body) {
      const error = await this.errorOf(response);
      controller.abort();
      return failed(error);
    }
    this.setState('sse');
    void this.readSse(response.body, controller, generation);
    this.scheduleUpgrade(generation);
    return { open: true };
  }

  private async readSse(body: ReadableStream<Uint8Array>, controller: AbortController, generation: number): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let idle = setTimeout(() => controller.abort(), SSE_IDLE_TIMEOUT_MS);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        clearTimeout(idle);
        if (generation !== this.generation) return;
        if (done) break;
        idle = setTimeout(() => controller.abort(), SSE_IDLE_TIMEOUT_MS);
        const messages: Message[] = [];
        for (const event of parser.push(decoder.decode(value, { stream: true }))) {
          if (event.event !== 'message') continue;
          try {
            const message = JSON.parse(event.data);
            if (isMessage(message)) messages.push(message);
          } catch {
            // Not a message: ignored like any unknown event.
          }
        }
        if (messages.length) this.deliver(messages, []);
      }
    } catch (error) {
      clearTimeout(idle);
      if (generation === this.generation) this.lost(toChatError(error, 'connection_lost'));
      return;
    }
    // The stream ended on purpose (its maximum duration): come back after its `retry`, trying the WebSocket first.
    if (generation === this.generation) this.lost(undefined, parser.retryMs ?? DEFAULT_SSE_RETRY_MS);
  }

  // --- Polling -----------------------------------------------------------------------------------

  private async startPolling(generation: number): Promise<Attempt> {
    if (this.seen.lastSeenId === undefined) this.deliver(await this.initialLoad(), []);
    if (this.closed || generation !== this.generation) return failed(new ChatError('superseded', 'Superseded'));
    try {
      await this.pollOnce(generation);
    } catch (error) {
      return failed(toChatError(error));
    }
    if (this.closed || generation !== this.generation) return failed(new ChatError('superseded', 'Superseded'));
    this.setState('polling');
    this.schedulePoll(generation, this.pollIntervalMs);
    this.scheduleUpgrade(generation);
    return { open: true };
  }

  private schedulePoll(generation: number, delayMs: number): void {
    this.pollTimer = setTimeout(async () => {
      if (generation !== this.generation) return;
      try {
        await this.pollOnce(generation);
        if (generation === this.generation) this.schedulePoll(generation, this.pollIntervalMs);
      } catch (error) {
        if (generation !== this.generation) return;
        const chatError = toChatError(error);
        if (classify(chatError) === 'rate_limited') {
          this.schedulePoll(generation, Math.max(this.pollIntervalMs, (chatError.retryAfter ?? 0) * 1000));
        } else {
          this.onTransportError(chatError);
        }
      }
    }, delayMs);
  }

  private async pollOnce(generation: number): Promise<void> {
    const messages = await this.catchUp(generation);
    if (generation === this.generation) this.deliver(messages, []);
  }

  /** While on SSE or polling, try the WebSocket now and then (not before a 429's `Retry-After`); when it opens it takes over. */
  private scheduleUpgrade(generation: number, delayMs = this.upgradeIntervalMs): void {
    if (this.upgradeIntervalMs <= 0 || !this.transports.includes('websocket')) return;
    this.upgradeTimer = setTimeout(async () => {
      if (this.closed || generation !== this.generation) return;
      let refusal: ChatError | undefined;
      try {
        const token = await this.token();
        // The timeline has started (SSE and polling read it first): no history frame.
        const history = this.historyToAsk();
        refusal = await this.connectSocket(token, history, (socket) => {
          if (this.closed || generation !== this.generation) return false;
          this.teardown();
          this.attempt = 0;
          this.adopt(socket, history);
          return true;
        });
      } catch (error) {
        refusal = toChatError(error);
      }
      if (refusal && !this.closed && generation === this.generation) {
        this.scheduleUpgrade(generation, Math.max(this.upgradeIntervalMs, (refusal.retryAfter ?? 0) * 1000));
      }
    }, delayMs);
  }

  // --- Messages ----------------------------------------------------------------------------------

  /** Delivers the messages not delivered before, in id order; `replayed` ones below the floor are dropped. */
  private deliver(replayed: readonly Message[], live: readonly Message[]): void {
    const floor = this.floor;
    const candidates = floor === undefined ? [...replayed, ...live] : [...replayed.filter((message) => message.id >= floor), ...live];
    for (const message of this.seen.accept(candidates)) this.emit('message', message);
  }

  private deliverLive(message: Message): void {
    if (this.sync) this.sync.buffer.push(message);
    else this.deliver([], [message]);
  }

  /** The newest `history` messages over REST; fixes where the client's timeline starts. */
  private async initialLoad(): Promise<Message[]> {
    const page = await this.request<Page>(
      'GET',
      `/rooms/${encodeURIComponent(this.roomId)}/messages?limit=${Math.max(1, this.historySize)}`,
    );
    const messages = Array.isArray(page?.messages) ? page.messages.filter(isMessage) : [];
    if (this.historySize === 0) {
      const newest = messages.at(-1)?.id ?? 0;
      this.floor = newest + 1;
      this.seen.startAt(newest);
      return [];
    }
    this.startWindow(messages);
    return messages;
  }

  private startWindow(messages: readonly Message[]): void {
    const ids = messages.map((message) => message.id);
    this.floor = ids.length ? Math.min(...ids) : 0;
    this.seen.startAt(ids.length ? Math.max(...ids) : 0);
  }

  /** Every message after `lastSeenId - overlap`, paged until `hasMore` is false. */
  private async catchUp(generation: number): Promise<Message[]> {
    const messages: Message[] = [];
    let after = this.seen.resumeAfter() ?? 0;
    for (let page = 0; page < MAX_CATCH_UP_PAGES && generation === this.generation; page += 1) {
      const body = await this.request<Page>('GET', `/rooms/${encodeURIComponent(this.roomId)}/messages?after=${after}&limit=${PAGE_SIZE}`);
      const batch = Array.isArray(body?.messages) ? body.messages.filter(isMessage) : [];
      messages.push(...batch);
      const last = batch.at(-1);
      if (!body?.hasMore || !last) break;
      after = last.id;
    }
    return messages;
  }

  private async postMessage(input: WireMessageInput): Promise<Message> {
    const message = await this.request<Message>('POST', `/rooms/${encodeURIComponent(this.roomId)}/messages`, input);
    if (isMessage(message) && !this.closed) this.deliverLive(message);
    return message;
  }

  /** A failure of an open transport (catch-up, poll): fatal ones end the client, the rest reconnect. */
  private onTransportError(error: ChatError): void {
    const kind = classify(error);
    if (kind === 'fatal') this.fail(error);
    else this.lost(error, kind === 'rate_limited' ? (error.retryAfter ?? 0) * 1000 : 0);
  }

  // --- HTTP --------------------------------------------------------------------------------------

  private async token(): Promise<string> {
    if (this.options.getToken) {
      try {
        return await this.options.getToken();
      } catch (error) {
        throw toChatError(error, 'token_unavailable');
      }
    }
    return this.options.token as string;
  }

  private async request<T>(method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    const token = await this.token();
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new ChatError('network_error', `${method} ${path} failed: ${(error as Error).message}`, { cause: error });
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // A gateway's HTML error page: the status still says what happened.
    }
    if (!response.ok) throw errorFromBody(parsed, response.status, response.headers.get('retry-after'));
    return parsed as T;
  }

  private async errorOf(response: Response): Promise<ChatError> {
    let parsed: unknown;
    try {
      const text = await response.text();
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (response.ok) return new ChatError('unexpected_response', `Expected text/event-stream, got ${response.headers.get('content-type')}`);
    return errorFromBody(parsed, response.status, response.headers.get('retry-after'));
  }

  /**
   * The reconnect curve of `GET /client/feature-flags`, or `undefined` when it cannot be read. A token
   * the service does not accept gets a `401` (older servers) or the anonymous defaults with
   * `flagship: false` (newer ones): neither breaks anything, the curve is then not the project's yet.
   */
  private async loadBackoff(): Promise<BackoffSettings | undefined> {
    try {
      const body = await this.request<unknown>('GET', '/client/feature-flags', undefined, FLAGS_TIMEOUT_MS);
      const settings = parseBackoff(body);
      if (settings && (body as { flagship?: unknown }).flagship === true) this.backoffTargeted = true;
      return settings;
    } catch {
      return undefined;
    }
  }

  /**
   * A transport opened, so the token works now (`getToken` may have renewed it). When the first read
   * of the flags failed or was anonymous, read them once more to get the project's curve.
   */
  private refreshBackoff(): void {
    if (this.backoffTargeted || this.backoffRefreshed) return;
    this.backoffRefreshed = true;
    void this.backoff.then(async () => {
      if (this.backoffTargeted || this.closed) return;
      const settings = await this.loadBackoff();
      if (settings && !this.closed) this.backoff = Promise.resolve(settings);
    });
  }

  private emit<K extends keyof RoomClientEvents>(event: K, ...args: Parameters<RoomClientEvents[K]>): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener(...args);
      } catch (error) {
        // A listener's bug must not break the connection; it is reported as an `error` event instead.
        if (event !== 'error') this.emit('error', toChatError(error, 'listener_failed'));
      }
    }
  }
}
