import { ConnectionManager } from './connection-manager.js';
import { RoomEmitter } from './emitter.js';
import { ChatError } from './errors.js';
import { MessageLog } from './message-log.js';
import { PendingSends } from './pending-sends.js';
import { type MessageInput, RoomRest } from './rest.js';
import { resolveSettings } from './settings.js';
import type { ConnectionState, Message, RoomClient, RoomClientEvents, RoomClientOptions, SendOptions } from './types.js';
import { isMessage } from './wire-messages.js';

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

function randomId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return crypto?.randomUUID ? `c-${crypto.randomUUID()}` : `c-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/** The public face of the client: its events, `send` and `trigger`, over the connection manager. */
class RoomConnection implements RoomClient {
  readonly roomId: string;
  private readonly events = new RoomEmitter();
  private readonly rest: RoomRest;
  private readonly log: MessageLog;
  private readonly sends: PendingSends;
  private readonly connection: ConnectionManager;
  private refCounter = 0;

  constructor(options: RoomClientOptions) {
    const settings = resolveSettings(options);
    this.roomId = settings.roomId;
    this.rest = new RoomRest(settings);
    this.log = new MessageLog(this.rest, settings.history, (message) => this.events.emit('message', message));
    this.sends = new PendingSends((input) => this.postMessage(input), settings.ackTimeoutMs);
    const { rest, log, sends, events } = this;
    this.connection = new ConnectionManager({ settings, rest, log, sends, events }, options.backoff);
  }

  get state(): ConnectionState {
    return this.connection.state;
  }

  get members(): readonly string[] {
    return this.connection.socket?.presence.members ?? [];
  }

  get subscriptionCount(): number {
    return this.connection.socket?.presence.subscriptionCount ?? 0;
  }

  get socketId(): string | undefined {
    return this.connection.socket?.socketId;
  }

  get lastMessageId(): number | undefined {
    return this.log.lastSeenId;
  }

  get lastError(): ChatError | undefined {
    return this.connection.lastError;
  }

  on<K extends keyof RoomClientEvents>(event: K, listener: RoomClientEvents[K]): () => void {
    return this.events.on(event, listener);
  }

  async send(content: string, options: SendOptions = {}): Promise<Message> {
    if (this.connection.ended) throw new ChatError('closed', 'The room client is closed');
    const clientMessageId = options.clientMessageId ?? randomId();
    const input: MessageInput = {
      content,
      clientMessageId,
      ...(options.parent_id === undefined ? {} : { parent_id: options.parent_id }),
      ...(options.attachments === undefined ? {} : { attachments: [...options.attachments] }),
    };
    const socket = this.connection.socket;
    if (!socket?.isOpen || this.sends.has(clientMessageId)) return this.postMessage(input);
    return this.sends.send(input, (frame) => socket.send(frame));
  }

  trigger(event: string, data: Record<string, unknown> = {}): string {
    if (!CLIENT_EVENT_NAME.test(event)) {
      throw new ChatError('validation_failed', 'Client events are named client-<1-64 characters of A-Z a-z 0-9 _ . : ->');
    }
    const socket = this.connection.socket;
    if (!socket?.isOpen) throw new ChatError('not_connected', 'Client events need the WebSocket transport');
    this.refCounter += 1;
    const ref = `r${this.refCounter}`;
    socket.send({ type: event, data, ref });
    return ref;
  }

  close(): void {
    this.connection.close();
  }

  /** Stores a message over REST; the stored message is delivered like any other. */
  private async postMessage(input: MessageInput): Promise<Message> {
    const message = await this.rest.postMessage(input);
    if (isMessage(message) && !this.connection.ended) this.log.live(message);
    return message;
  }
}
