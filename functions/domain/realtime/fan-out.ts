import { encodeFrame, type ManyPostOutcome, postToConnections } from '#shared/gateway';
import { logger } from '#shared/logger';

/**
 * Sends one frame to many connections, encoded once. A post that fails for another reason than a
 * vanished connection is logged and skipped: one bad connection must not stop the rest.
 */
export async function postFrames(connectionIds: readonly string[], frame: unknown): Promise<ManyPostOutcome> {
  const outcome = await postToConnections(connectionIds, encodeFrame(frame), frame);
  for (const { connectionId, error } of outcome.failed) logger.warn('post to connection failed', { connectionId, error });
  return outcome;
}
