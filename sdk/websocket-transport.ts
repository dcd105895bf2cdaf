import { ChatError, classify, errorFromFrame, toChatError } from './errors.js';
import { PresenceTracker } from './presence.js';
import type { RoomRest } from './rest.js';
import { type RoomTransport, superseded, type TransportHost } from './transport.js';
import type { AgentTyping, HandoffChange, Message, MessageUpdate, RoomEvent, WebSocketLike } from './types.js';
import { connectWebSocket } from './websocket-connect.js';
import { isMessage, messagesIn } from './wire-messages.js';

const OPEN = 1;
/** How long the first WebSocket connection waits for the `history` frame it asked for before reading history over REST. */
const HISTORY_FRAME_WAIT_MS = 3000;

/**
 * The room over a WebSocket: messages, presence, server and client events, and sends answered by
 * `ack`. Once open it replays what the client has not seen (the `history` frame or a REST catch-up)
 * and holds live messages back until that replay is delivered, so nothing overtakes it.
 */
export class WebSocketTransport implements RoomTransport {
  readonly state = 'connected';
  readonly presence: PresenceTracker;
  private connectionId: string | undefined;
  private socket: WebSocketLike | undefined;
  private closed = false;
  private lastFrameAt = 0;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  /** From the open until the replay is delivered; a `history` frame in that time is the replay. */
  private replaying = false;
  private historyFrame: Message[] | undefined;
  private historyArrived: (() => void) | undefined;

  constructor(private readonly host: TransportHost) {
    this.presence = new PresenceTracker(host.events);
  }

  /** This connection's id, from its `connected` frame. */
  get socketId(): string | undefined {
    return this.connectionId;
  }

  get isOpen(): boolean {
    return this.socket?.readyState === OPEN;
  }

  async open(): Promise<ChatError | undefined> {
    const token = await this.host.rest.token();
    if (this.closed) return superseded();
    const history = this.host.log.historyToAsk();
    return connectWebSocket(this.host.settings, token, history, (socket) => this.adopt(socket, history));
  }

  /** Sends a client frame; throws when the socket is closing. */
  send(frame: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify(frame));
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pingTimer);
    // A replay waiting for the `history` frame stops now, not when its wait runs out.
    this.historyArrived?.();
    if (this.replaying) this.host.log.dropHeld();
    try {
      this.socket?.close(1000, 'client');
    } catch {
      // Already closing.
    }
  }

  /** The socket opened: it carries the room from now on, unless this transport was closed while it connected. */
  private adopt(socket: WebSocketLike, history: number): boolean {
    if (this.closed) return false;
    this.socket = socket;
    this.lastFrameAt = Date.now();
    socket.addEventListener('message', (event) => {
      if (this.closed) return;
      const data = (event as { data?: unknown }).data;
      this.onFrame(typeof data === 'string' ? data : String(data));
    });
    socket.addEventListener('close', (event) => {
      if (this.closed) return;
      this.host.lost(this, new ChatError('connection_lost', `The WebSocket closed (${(event as { code?: number })?.code ?? '?'})`));
    });
    this.pingTimer = setInterval(() => this.ping(), this.host.settings.pingIntervalMs);
    // The socket is in place first, so a `state` listener can already `send` or `trigger` over it.
    this.host.opened(this);
    this.replaying = true;
    this.host.log.hold();
    void this.replay(history);
    return true;
  }

  /** A WebSocket that has sent nothing (not even a `pong`) for two ping intervals is dead. */
  private ping(): void {
    if (Date.now() - this.lastFrameAt > 2 * this.host.settings.pingIntervalMs) {
      this.host.lost(this, new ChatError('connection_lost', 'The WebSocket stopped answering pings'));
      return;
    }
    try {
      this.send({ type: 'ping' });
    } catch {
      // Closing: the close event reconnects.
    }
  }

  /**
   * First connection: the `history` frame it asked for (or REST when it does not come, or when it
   * asked for none). Later ones: a REST catch-up from the last id seen, paged to the end. Then the
   * held live messages, merged.
   */
  private async replay(history: number): Promise<void> {
    const { log } = this.host;
    let replayed: Message[];
    try {
      if (log.started) {
        replayed = await log.catchUp(() => !this.closed);
        if (this.historyFrame) replayed.push(...this.historyFrame);
      } else {
        // history=0: the server sends no frame, so there is nothing to wait for.
        const frame = history > 0 ? await this.waitForHistory() : undefined;
        if (this.closed) return;
        if (frame) log.startWindow(frame);
        replayed = frame ?? (await log.loadWindow());
      }
    } catch (error) {
      if (!this.closed) this.host.lost(this, toChatError(error));
      return;
    }
    if (this.closed) return;
    this.replaying = false;
    log.release(replayed);
  }

  private waitForHistory(): Promise<Message[] | undefined> {
    return new Promise((resolve) => {
      const arrived = () => {
        clearTimeout(timer);
        this.historyArrived = undefined;
        resolve(this.historyFrame);
      };
      const timer = setTimeout(arrived, HISTORY_FRAME_WAIT_MS);
      this.historyArrived = arrived;
    });
  }

  private onFrame(raw: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      return;
    }
    if (!isFrame(frame)) return;
    this.lastFrameAt = Date.now();
    if (frame.type !== 'batch') {
      this.apply(frame);
      return;
    }
    // A busy room's frames, wrapped together to cost one WebSocket message (the client asked with
    // `batch=1`): each goes the way it would have gone alone, in order. An entry that is not a
    // frame is dropped as a malformed frame is, and the rest still arrive.
    if (!Array.isArray(frame.frames)) return;
    for (const inner of frame.frames) {
      if (this.closed) return;
      // The server never nests batches; one that did is an unknown frame, not unpacked again.
      if (isFrame(inner) && inner.type !== 'batch') this.apply(inner);
    }
  }

  /** One frame of the room, alone or out of a batch. */
  private apply(frame: Record<string, any>): void {
    if (this.presence.apply(frame)) return;
    const { events, log, sends } = this.host;
    switch (frame.type) {
      case 'connected':
        if (typeof frame.socketId === 'string') this.connectionId = frame.socketId;
        break;
      case 'history':
        if (this.replaying && !this.historyFrame) {
          this.historyFrame = messagesIn(frame.messages);
          this.historyArrived?.();
        } else {
          log.deliver(messagesIn(frame.messages));
        }
        break;
      case 'message':
        if (isMessage(frame.message)) log.live(frame.message);
        break;
      case 'ack': {
        const message = isMessage(frame.message) ? frame.message : undefined;
        if (message) log.live(message);
        sends.acknowledged(frame.clientMessageId, message);
        break;
      }
      case 'error': {
        const error = errorFromFrame(frame);
        if (!sends.refused(frame.clientMessageId, error)) events.emit('error', error);
        break;
      }
      case 'event': {
        const { type: _type, ...event } = frame;
        events.emit('event', event as RoomEvent);
        break;
      }
      case 'message_updated': {
        const { type: _type, ...update } = frame;
        events.emit('message_updated', update as MessageUpdate);
        break;
      }
      case 'handoff': {
        const { type: _type, ...handoff } = frame;
        events.emit('handoff', handoff as HandoffChange);
        break;
      }
      case 'agentTyping': {
        const { type: _type, ...typing } = frame;
        events.emit('agent_typing', typing as AgentTyping);
        break;
      }
      default:
      // `pong`, `cache_miss` and frames of newer servers.
    }
  }
}

/** A frame as the server sends it: a JSON object with a string `type`; anything else is ignored. */
const isFrame = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';

/**
 * A refused upgrade carries no error code. When the status says the credentials, the membership or
 * the room were refused, the same request over REST gets the service's code; when REST is let
 * through, something in between refused the WebSocket, and the next transport may get through too.
 */
export async function explainRefusal(refusal: ChatError, rest: RoomRest): Promise<ChatError> {
  if (refusal.code !== 'websocket_refused' || classify(refusal) !== 'fatal') return refusal;
  return (await rest.refusal()) ?? new ChatError('websocket_refused', refusal.message);
}
