import { publishServerEvent } from '#domain/realtime/server-events';
import { httpHandler } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { eventData, eventName } from './schemas';

export const MAX_EVENT_ROOMS = 10;
const socketId = z.string().check(z.minLength(1), z.maxLength(128));

const body = z.strictObject({
  roomIds: z.array(idSchema).check(z.minLength(1), z.maxLength(MAX_EVENT_ROOMS)),
  name: eventName,
  data: eventData,
  excludeSocketId: z.optional(socketId),
  /** Pusher's spelling, accepted so existing server code ports over. */
  socket_id: z.optional(socketId),
});

export const handler = httpHandler('PublishEvents', { body }, async ({ body, caller }) => {
  const { socket_id, excludeSocketId, ...input } = body;
  const result = await publishServerEvent(caller, { ...input, excludeSocketId: excludeSocketId ?? socket_id });
  return { status: 202, body: result };
});
