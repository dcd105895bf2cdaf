import type { RoomEmitter } from './emitter.js';
import { ChatError } from './errors.js';
import type { MessageLog } from './message-log.js';
import type { PendingSends } from './pending-sends.js';
import type { RoomRest } from './rest.js';
import type { ClientSettings } from './settings.js';
import type { ConnectionState } from './types.js';

/**
 * One way of carrying the room (a WebSocket, an SSE stream, polling). The connection manager
 * creates one per attempt and closes it when it is lost or replaced; a closed transport never
 * reaches its host again.
 */
export interface RoomTransport {
  /** The client's state while this transport carries the room. */
  readonly state: Extract<ConnectionState, 'connected' | 'sse' | 'polling'>;
  /**
   * Opens the transport. Resolves with `undefined` once it is open and has told the host, or with
   * why it did not open. A transport closed meanwhile resolves with a `superseded` error nobody reads.
   */
  open(): Promise<ChatError | undefined>;
  /** Stops it and its timers. */
  close(): void;
}

/** What the client shares with every transport. */
export interface ClientServices {
  readonly settings: ClientSettings;
  readonly rest: RoomRest;
  readonly log: MessageLog;
  readonly sends: PendingSends;
  readonly events: RoomEmitter;
}

/** What a transport reports to the connection manager. */
export interface TransportHost extends ClientServices {
  /**
   * `transport` opened: it carries the room from now on. Called at the moment it opens (a WebSocket:
   * inside its `open` event, its listeners in place), and only while it is not closed.
   */
  opened(transport: RoomTransport): void;
  /**
   * `transport`, open until now, failed. With an `error` that refuses the client for good (see
   * `classify`) the client ends; otherwise it reconnects, after `minDelayMs` and any `Retry-After` at least.
   */
  lost(transport: RoomTransport, error?: ChatError, minDelayMs?: number): void;
}

/** What a transport closed while it was opening answers: the attempt it belonged to is over. */
export const superseded = (): ChatError => new ChatError('superseded', 'Superseded');
