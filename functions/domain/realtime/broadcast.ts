import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import type { ConnectionRef } from '#shared/db/connection';
import { logger } from '#shared/logger';
import { socketOf } from '#shared/pusher-protocol';
import { sendRealtimeJobs } from '#shared/queue';
import { roomConnections } from './connections';
import { postFrames } from './fan-out';
import { forgetGone } from './presence';

/**
 * The frame is out: a cleanup failure is logged, not thrown. Thrown, it would fail the request or
 * make SQS deliver a fan-out batch again, every receiver getting the frame twice.
 */
const forgetGoneAfterPosting = (connectionIds: readonly string[], listed?: { projectId: string; refs: readonly ConnectionRef[] }) =>
  forgetGone(connectionIds, { listed }).catch((error) => logger.error('forgetting gone connections failed', { error: error as Error }));

/** A fan-out batch of a large room, handled by one realtime worker invocation. */
export interface FanOutJob {
  readonly kind: 'fanout';
  readonly frame: unknown;
  readonly connectionIds: readonly string[];
}

export interface BroadcastResult {
  /** Posted by this call. */
  readonly sent: number;
  /** Handed to the realtime workers (rooms past `REALTIME_FANOUT_QUEUE_THRESHOLD`). */
  readonly queued: number;
}

/**
 * Sends a frame to every connection of a room but `excludeConnectionId` (a connection, a Pusher
 * subscription, or a Pusher socket with all its subscriptions). The connection list is
 * read once (or given). Small rooms are posted from here with bounded parallelism; rooms past
 * `REALTIME_FANOUT_QUEUE_THRESHOLD` connections are split into batches of
 * `REALTIME_FANOUT_BATCH_SIZE` and queued, so parallel workers post them and this request returns.
 */
export async function broadcastToRoom(
  projectId: string,
  roomId: string,
  frame: unknown,
  options: { excludeConnectionId?: string; refs?: readonly ConnectionRef[] } = {},
): Promise<BroadcastResult> {
  const refs = options.refs ?? (await roomConnections(projectId, roomId));
  const exclude = options.excludeConnectionId;
  // A Pusher socket is excluded with every subscription it holds.
  const targets = refs.map((ref) => ref.connectionId).filter((id) => id !== exclude && socketOf(id) !== exclude);
  if (targets.length > config.REALTIME_FANOUT_QUEUE_THRESHOLD && boundIfSet('queue:Realtime')) {
    const jobs: FanOutJob[] = [];
    for (let start = 0; start < targets.length; start += config.REALTIME_FANOUT_BATCH_SIZE) {
      jobs.push({ kind: 'fanout', frame, connectionIds: targets.slice(start, start + config.REALTIME_FANOUT_BATCH_SIZE) });
    }
    await sendRealtimeJobs(jobs);
    return { sent: 0, queued: targets.length };
  }
  const outcome = await postFrames(targets, frame);
  await forgetGoneAfterPosting(outcome.gone, { projectId, refs });
  return { sent: outcome.sent, queued: 0 };
}

/** Posts a fan-out batch (the realtime worker's half of `broadcastToRoom`). */
export async function deliverFanOut(job: FanOutJob): Promise<number> {
  const outcome = await postFrames(job.connectionIds, job.frame);
  await forgetGoneAfterPosting(outcome.gone);
  return outcome.sent;
}
