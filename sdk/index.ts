/**
 * The chat service's browser and Node client for one room: WebSocket, then SSE, then polling, with
 * reconnects, resume and de-duplication. No dependencies; see `sdk/README.md`.
 */
export { type BackoffSettings, backoffDelay, DEFAULT_BACKOFF, parseBackoff } from './backoff.js';
export { ChatError } from './errors.js';
export { RESUME_OVERLAP, SeenIds } from './message-ids.js';
export { createRoomClient } from './room-client.js';
export { type SseEvent, SseParser } from './sse-parser.js';
export type {
  AgentTyping,
  ConnectionState,
  FetchLike,
  HandoffChange,
  MemberChange,
  Message,
  MessageChange,
  MessageUpdate,
  Presence,
  RoomClient,
  RoomClientEvents,
  RoomClientOptions,
  RoomEvent,
  SendOptions,
  Transport,
  WebSocketConstructor,
  WebSocketLike,
} from './types.js';
