import { enforceRouteGuards } from '#domain/guards/route-guards';
import { CLIENT_EVENT_PATTERN, MAX_CLIENT_EVENT_BYTES, relayClientEvent } from '#domain/realtime/client-events';
import { roomConnections } from '#domain/realtime/connections';
import { findSubscription, SubscriptionRefusal, subscribe, unsubscribe } from '#domain/realtime/pusher-sockets';
import type { Connection } from '#shared/db/connection';
import { RateLimitedError } from '#shared/errors';
import { storableJsonObject } from '#shared/json';
import { logger } from '#shared/logger';
import { PUSHER_ERRORS, parseRoomChannel, pusherFrame, subscriptionId } from '#shared/pusher-protocol';
import * as z from '#shared/schema';
import { frameRoute } from '#wiring';

/** The frames of a Pusher socket: `{ event, channel?, data? }`, `data` an object or its JSON string. */
const pusherMessage = z.object({
  event: z.string().check(z.minLength(1), z.maxLength(200)),
  channel: z.optional(z.string().check(z.maxLength(200))),
  data: z.optional(z.unknown()),
});

const subscribeData = z.object({
  channel: z.string().check(z.minLength(1), z.maxLength(200)),
  auth: z.optional(z.string().check(z.maxLength(512))),
  channel_data: z.optional(z.string()),
});

const pusherError = (code: number | null, message: string, channel?: string) => pusherFrame('pusher:error', { code, message }, channel);

/** Pusher clients may send `data` as an object or as its JSON string. */
function dataObject(data: unknown): unknown {
  if (typeof data !== 'string') return data;
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/**
 * One frame of a Pusher socket (`$default`), answered with the frame to send back or `undefined`.
 * What a client sends wrong costs it an error frame, never the socket or the function.
 */
export async function dispatchPusherFrame(socket: Connection, raw: string): Promise<string | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return pusherError(PUSHER_ERRORS.invalidMessage, 'Frames are JSON objects');
  }
  const message = pusherMessage.safeParse(parsed);
  if (!message.success) return pusherError(PUSHER_ERRORS.invalidMessage, 'Frames are { event, channel?, data? } objects');
  const { event, channel } = message.data;
  const data = dataObject(message.data.data);
  switch (event) {
    case 'pusher:ping':
      return pusherFrame('pusher:pong', {});
    case 'pusher:pong':
      return undefined;
    case 'pusher:subscribe':
      return subscribeFrame(socket, data);
    case 'pusher:unsubscribe': {
      const request = z.object({ channel: z.string().check(z.maxLength(200)) }).safeParse(data);
      if (!request.success) return pusherError(PUSHER_ERRORS.invalidMessage, 'pusher:unsubscribe needs data.channel');
      await unsubscribe(socket, request.data.channel);
      return undefined;
    }
    default:
      if (event.startsWith('client-')) return clientEvent(socket, event, channel, data, raw);
      return pusherError(null, `Unsupported event ${JSON.stringify(event).slice(0, 80)}`);
  }
}

async function subscribeFrame(socket: Connection, data: unknown): Promise<string | undefined> {
  const request = subscribeData.safeParse(data);
  if (!request.success)
    return pusherError(PUSHER_ERRORS.invalidMessage, 'pusher:subscribe needs data.channel, data.auth and data.channel_data strings');
  try {
    await subscribe(socket, request.data);
    return undefined;
  } catch (error) {
    if (error instanceof SubscriptionRefusal) {
      return JSON.stringify({
        event: 'pusher:subscription_error',
        channel: request.data.channel,
        data: { type: error.type, error: error.message, status: error.status },
      });
    }
    logger.error('pusher:subscribe failed', { error: error as Error, channel: request.data.channel });
    return pusherError(PUSHER_ERRORS.serverError, 'The subscription failed; try again', request.data.channel);
  }
}

/**
 * `client-*` on a private or presence channel the socket has joined: relayed to the room's other
 * connections (never echoed), under the native frame table's rate limit for client events. As on
 * a native socket, the limit and the room's connection list are read side by side; the list holds
 * the socket's subscription, so it costs no read of its own unless the list is older than the
 * subscription (an eventually consistent read just after it).
 */
async function clientEvent(socket: Connection, event: string, channel: string | undefined, data: unknown, raw: string) {
  const refuse = (reason: string) => pusherError(PUSHER_ERRORS.clientEventRejected, reason, channel);
  if (!CLIENT_EVENT_PATTERN.test(event)) return refuse('Client event names are client- followed by 1-64 letters, digits or _ . : -');
  const room = channel === undefined ? undefined : parseRoomChannel(channel);
  if (channel === undefined || !room) return refuse('Client events need a private or presence room channel the socket has joined');
  if (Buffer.byteLength(raw) > MAX_CLIENT_EVENT_BYTES) return refuse(`Client events are limited to ${MAX_CLIENT_EVENT_BYTES} bytes`);
  const payload = storableJsonObject.safeParse(data ?? {});
  if (!payload.success) return refuse('Client event data must be a JSON object without empty keys');
  const id = subscriptionId(socket.connectionId, channel);
  const [limit, refs] = await Promise.allSettled([
    enforceRouteGuards(frameRoute(event) ?? {}, { projectId: socket.projectId, connectionId: socket.connectionId }),
    roomConnections(socket.projectId, room.roomId),
  ]);
  if (limit.status === 'rejected') {
    if (limit.reason instanceof RateLimitedError) {
      return refuse(`Client event rate limit exceeded; retry after ${limit.reason.retryAfterSeconds} s`);
    }
    throw limit.reason;
  }
  if (refs.status === 'rejected') throw refs.reason;
  const listed = refs.value.find((ref) => ref.connectionId === id);
  const subscription: Connection | undefined = listed
    ? { ...socket, channel: 'room', roomId: room.roomId, userId: listed.userId, connectionId: id }
    : await findSubscription(socket, channel);
  if (!subscription) return refuse(`Subscribe to ${channel} before sending client events on it`);
  await relayClientEvent(subscription, event, payload.data, refs.value);
  return undefined;
}
