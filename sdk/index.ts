/**
 * The chat service's browser and Node client for one room: WebSocket, then SSE, then polling, with
 * reconnects, resume and de-duplication. No dependencies; see `sdk/README.md`.
 */
export { type BackoffSettings, backoffDelay, DEFAULT_BACKOFF, parseBackoff } from './backoff';
export { ChatError } from './errors';
export { RESUME_OVERLAP, SeenIds } from './message-ids';
export { createRoomClient } from './room-client';
export { type SseEvent, SseParser } from './sse-parser';
export type {
  ConnectionState,
  FetchLike,
  MemberChange,
  Message,
  Presence,
  RoomClient,
  RoomClientEvents,
  RoomClientOptions,
  RoomEvent,
  SendOptions,
  Transport,
  WebSocketConstructor,
  WebSocketLike,
} from './types';
