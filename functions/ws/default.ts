import { messageFields } from '#domain/messages/message-input';
import { sendMessage } from '#domain/messages/pipeline';
import { relayClientEvent } from '#domain/realtime/client-events';
import { findConnection } from '#domain/realtime/connections';
import type { Role } from '#lib/routes';
import type { Connection } from '#shared/db/connection';
import { HttpError, RateLimitedError } from '#shared/errors';
import { postToConnection } from '#shared/gateway';
import { logger } from '#shared/logger';
import * as z from '#shared/schema';
import { wsHandler } from '#shared/ws';

const messageFrame = z.strictObject({ type: z.literal('message'), ...messageFields });

const CLIENT_EVENT_PATTERN = /^client-[A-Za-z0-9_.:-]{1,64}$/;
/** Pusher's limit for one client event; keeps a chatty client from filling everyone's socket. */
const MAX_CLIENT_FRAME_BYTES = 10 * 1024;

const clientEventFrame = z.strictObject({
  type: z.string().check(z.regex(CLIENT_EVENT_PATTERN, 'must be client- followed by 1-64 characters of letters, digits and _ . : -')),
  data: z.optional(z.record(z.string(), z.unknown())),
  ref: z.optional(z.string().check(z.maxLength(128))),
});

const frameKind = z.object({ type: z.string() });

type ErrorContext = { clientMessageId?: string; ref?: string; event?: string };

function errorFrame(error: unknown, context: ErrorContext = {}) {
  const base = { type: 'error', ...context };
  if (error instanceof HttpError) {
    return {
      ...base,
      error: error.toJSON().error,
      ...(error instanceof RateLimitedError ? { retryAfter: error.retryAfterSeconds } : {}),
    };
  }
  logger.error('websocket frame failed', { error: error as Error });
  return { ...base, error: { code: 'internal_error', message: 'Internal error' } };
}

function validationError(issues: readonly { path: PropertyKey[]; message: string }[], context: ErrorContext = {}) {
  const details = issues.map((issue) => ({ field: issue.path.map(String).join('.'), message: issue.message }));
  return { type: 'error', ...context, error: { code: 'validation_failed', message: 'Invalid frame', details } };
}

async function handleMessage(connection: Connection, frame: unknown): Promise<unknown> {
  const parsed = messageFrame.safeParse(frame);
  if (!parsed.success) return validationError(parsed.error.issues);
  const { type: _type, ...input } = parsed.data;
  const principal = {
    kind: 'user' as const,
    projectId: connection.projectId,
    userId: connection.userId,
    roles: connection.roles as Role[],
  };
  try {
    const { message, created } = await sendMessage(
      principal,
      { ...input, roomId: connection.roomId as string },
      { source: 'websocket', connectionId: connection.connectionId },
    );
    return { type: 'ack', clientMessageId: input.clientMessageId ?? null, created, message };
  } catch (error) {
    return errorFrame(error, input.clientMessageId ? { clientMessageId: input.clientMessageId } : {});
  }
}

/** A `client-*` frame: validated here, relayed by the domain; a rate limit answers with an error frame. */
async function handleClientEvent(connection: Connection, frame: unknown, size: number): Promise<unknown> {
  const parsed = clientEventFrame.safeParse(frame);
  const event = (frame as { type: string }).type;
  if (!parsed.success) return validationError(parsed.error.issues, { event });
  const context = { event, ...(parsed.data.ref ? { ref: parsed.data.ref } : {}) };
  if (size > MAX_CLIENT_FRAME_BYTES) {
    return {
      type: 'error',
      ...context,
      error: { code: 'payload_too_large', message: `Client events are limited to ${MAX_CLIENT_FRAME_BYTES} bytes` },
    };
  }
  try {
    await relayClientEvent(connection, event, parsed.data.data ?? {});
  } catch (error) {
    return errorFrame(error, context);
  }
  return undefined;
}

/**
 * Client frames: `message` runs the message pipeline as the connection's user in its room and is
 * answered by `ack` or `error`; `client-*` events go to the room's other connections; `ping` gets
 * `pong`. The user channel is receive-only apart from `ping`.
 */
export const handler = wsHandler('$default', async (event) => {
  const connectionId = event.requestContext.connectionId;
  // A frame sent right after the open can beat an eventually consistent read of the new record.
  const connection = (await findConnection(connectionId)) ?? (await findConnection(connectionId, { consistent: true }));
  if (!connection) return { statusCode: 410 };
  const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  let frame: unknown;
  try {
    frame = JSON.parse(raw);
  } catch {
    await postToConnection(connectionId, { type: 'error', error: { code: 'invalid_json', message: 'Frames are JSON objects' } });
    return { statusCode: 200 };
  }
  const kind = frameKind.safeParse(frame);
  let answer: unknown;
  if (!kind.success) answer = validationError(kind.error.issues);
  else if (kind.data.type === 'ping') answer = { type: 'pong' };
  else if (!connection.roomId) {
    answer = { type: 'error', error: { code: 'unsupported_frame', message: 'The user channel only receives; it accepts ping' } };
  } else if (kind.data.type === 'message') answer = await handleMessage(connection, frame);
  else if (kind.data.type.startsWith('client-')) answer = await handleClientEvent(connection, frame, Buffer.byteLength(raw));
  else {
    answer = {
      type: 'error',
      error: {
        code: 'unsupported_frame',
        message: `Unknown frame type ${JSON.stringify(kind.data.type).slice(0, 80)}; use message, client-*, ping`,
      },
    };
  }
  if (answer) await postToConnection(connectionId, answer);
  return { statusCode: 200 };
});
