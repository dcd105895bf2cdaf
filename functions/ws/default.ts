import { messageFields } from '#domain/messages/message-input';
import { sendMessage } from '#domain/messages/pipeline';
import { findConnection } from '#domain/realtime/connections';
import type { Role } from '#lib/routes';
import { HttpError, RateLimitedError } from '#shared/errors';
import { postToConnection } from '#shared/gateway';
import { logger } from '#shared/logger';
import * as z from '#shared/schema';
import { wsHandler } from '#shared/ws';

const messageFrame = z.strictObject({ type: z.literal('message'), ...messageFields });

function errorFrame(error: unknown, clientMessageId?: string) {
  if (error instanceof HttpError) {
    return {
      type: 'error',
      ...(clientMessageId ? { clientMessageId } : {}),
      error: error.toJSON().error,
      ...(error instanceof RateLimitedError ? { retryAfter: error.retryAfterSeconds } : {}),
    };
  }
  logger.error('websocket frame failed', { error: error as Error });
  return { type: 'error', ...(clientMessageId ? { clientMessageId } : {}), error: { code: 'internal_error', message: 'Internal error' } };
}

/**
 * Client frames. `type: message` runs the message pipeline as the connection's user in the
 * connection's room; the sender gets an `ack` with the stored message (or an `error` frame with the
 * same codes as the REST API), everyone else in the room the `message` broadcast.
 */
export const handler = wsHandler('$default', async (event) => {
  const connectionId = event.requestContext.connectionId;
  const connection = await findConnection(connectionId);
  if (!connection) return { statusCode: 410 };
  let frame: unknown;
  try {
    frame = JSON.parse(event.body ?? '');
  } catch {
    await postToConnection(connectionId, { type: 'error', error: { code: 'invalid_json', message: 'Frames are JSON objects' } });
    return { statusCode: 200 };
  }
  const parsed = messageFrame.safeParse(frame);
  if (!parsed.success) {
    const details = parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message }));
    await postToConnection(connectionId, { type: 'error', error: { code: 'validation_failed', message: 'Invalid frame', details } });
    return { statusCode: 200 };
  }
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
      { ...input, roomId: connection.roomId },
      { source: 'websocket', connectionId },
    );
    await postToConnection(connectionId, { type: 'ack', clientMessageId: input.clientMessageId ?? null, created, message });
  } catch (error) {
    await postToConnection(connectionId, errorFrame(error, input.clientMessageId));
  }
  return { statusCode: 200 };
});
