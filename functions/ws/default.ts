import { postMessage } from '#domain/messages/commands';
import { messageFields } from '#domain/messages/message-input';
import { CLIENT_EVENT_PATTERN, clientEventTargets, MAX_CLIENT_EVENT_BYTES, relayClientEvent } from '#domain/realtime/client-events';
import { findConnection } from '#domain/realtime/connections';
import { type FrameHandler, FrameRefusal, frameRouter, validationRefusal } from '#edge/frames';
import { dispatchPusherFrame } from '#edge/pusher-frames';
import { wsHandler } from '#edge/ws';
import type { Connection, ConnectionRef } from '#shared/db/connection';
import { BadRequestError, traced } from '#shared/errors';
import { postToConnection } from '#shared/gateway';
import { idSchema } from '#shared/ids';
import { storableJsonObject } from '#shared/json';
import * as z from '#shared/schema';
import type { Role } from '#wiring';

/** `roomId` is optional: the socket's room is implied, but a frame shaped like `POST /messages` may name it. */
const messageFrame = z.strictObject({ type: z.literal('message'), roomId: z.optional(idSchema), ...messageFields });
type MessageFrame = z.infer<typeof messageFrame>;

const clientEventFrame = z.strictObject({
  type: z.string().check(z.regex(CLIENT_EVENT_PATTERN, 'must be client- followed by 1-64 characters of letters, digits and _ . : -')),
  // Published as `client_event` too, so it must be storable: DynamoDB holds no map with an empty key.
  data: z.optional(storableJsonObject),
  ref: z.optional(z.string().check(z.maxLength(128))),
});
type ClientEventFrame = z.infer<typeof clientEventFrame>;

/** `message`: the message pipeline as the connection's user in its room, answered by `ack`. */
const message: FrameHandler<MessageFrame> = {
  parse(frame) {
    const parsed = messageFrame.safeParse(frame);
    if (!parsed.success) throw validationRefusal(parsed.error.issues);
    return parsed.data;
  },
  errorContext: (frame) => (frame.clientMessageId ? { clientMessageId: frame.clientMessageId } : {}),
  async run(connection, frame) {
    const { type: _type, roomId, ...input } = frame;
    // The frame table takes message frames on room sockets only.
    const socketRoomId = connection.roomId as string;
    if (roomId !== undefined && roomId !== socketRoomId) {
      throw new BadRequestError(
        `This socket is joined to room ${socketRoomId}; send to another room on its own socket or with POST /messages`,
        [{ field: 'roomId', message: `must be this socket's room (${socketRoomId}) or left out` }],
        'room_mismatch',
      );
    }
    const principal = {
      kind: 'user' as const,
      projectId: connection.projectId,
      userId: connection.userId,
      roles: connection.roles as Role[],
    };
    const outcome = await postMessage(
      principal,
      { ...input, roomId: socketRoomId },
      { source: 'websocket', connectionId: connection.connectionId },
    );
    // A slash command stores no message: its ack carries the command's result instead.
    if (outcome.kind === 'command')
      return { type: 'ack', clientMessageId: input.clientMessageId ?? null, created: false, command: outcome.result };
    return { type: 'ack', clientMessageId: input.clientMessageId ?? null, created: outcome.sent.created, message: outcome.sent.message };
  },
};

/** `client-*`: relayed to the room's other connections; the frame table holds its rate limit. */
const clientEvent: FrameHandler<ClientEventFrame, readonly ConnectionRef[]> = {
  parse(frame, raw) {
    const event = String(frame.type);
    // A refusal carries the client's ref back whenever the ref itself is usable, so it can be matched.
    const ref = typeof frame.ref === 'string' && frame.ref.length > 0 && frame.ref.length <= 128 ? { ref: frame.ref } : {};
    const parsed = clientEventFrame.safeParse(frame);
    if (!parsed.success) throw validationRefusal(parsed.error.issues, { event, ...ref });
    if (Buffer.byteLength(raw) > MAX_CLIENT_EVENT_BYTES) {
      throw new FrameRefusal({
        type: 'error',
        event,
        ...ref,
        error: traced({ code: 'payload_too_large', message: `Client events are limited to ${MAX_CLIENT_EVENT_BYTES} bytes` }),
      });
    }
    return parsed.data;
  },
  errorContext: (frame) => ({ event: frame.type, ...(frame.ref ? { ref: frame.ref } : {}) }),
  prepare: (connection) => clientEventTargets(connection),
  async run(connection, frame, refs) {
    await relayClientEvent(connection, frame.type, frame.data ?? {}, refs);
    return undefined;
  },
};

const dispatch = frameRouter({ message, 'client-*': clientEvent });

/**
 * Client frames, dispatched by type from the frame table, or by `event` on a Pusher socket; the
 * answer (ack, pong, error) goes back on the socket.
 */
export const handler = wsHandler('$default', async (event) => {
  const connectionId = event.requestContext.connectionId;
  // A frame sent right after the open can beat an eventually consistent read of the new record.
  const connection: Connection | undefined =
    (await findConnection(connectionId)) ?? (await findConnection(connectionId, { consistent: true }));
  if (!connection) return { statusCode: 410 };
  const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  const answer = connection.channel === 'pusher' ? await dispatchPusherFrame(connection, raw) : await dispatch(connection, raw);
  if (answer) await postToConnection(connectionId, answer);
  return { statusCode: 200 };
});
