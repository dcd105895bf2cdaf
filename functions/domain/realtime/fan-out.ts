import { encodeFrame, postManyOf, postToConnection } from '#shared/gateway';
import { logger } from '#shared/logger';

/** Posts to at most this many connections at once per fan-out. */
export const FAN_OUT_CONCURRENCY = 32;

export interface PostOutcome {
  readonly sent: number;
  /** Connections API Gateway no longer knows (410): the caller forgets them. */
  readonly gone: string[];
}

/**
 * Sends one frame to many connections with bounded parallelism. The frame is encoded once. A
 * post that fails for another reason is logged and skipped: one bad connection must not stop the rest.
 */
export async function postFrames(connectionIds: readonly string[], frame: unknown): Promise<PostOutcome> {
  const data = encodeFrame(frame);
  const postMany = postManyOf();
  if (postMany) {
    const outcome = await postMany(connectionIds, data);
    for (const { connectionId, error } of outcome.failed) logger.warn('post to connection failed', { connectionId, error });
    return outcome;
  }
  let sent = 0;
  const gone: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < connectionIds.length) {
      const connectionId = connectionIds[next++] as string;
      try {
        if ((await postToConnection(connectionId, data)) === 'sent') sent++;
        else gone.push(connectionId);
      } catch (error) {
        logger.warn('post to connection failed', { connectionId, error: error as Error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FAN_OUT_CONCURRENCY, connectionIds.length) }, worker));
  return { sent, gone };
}
