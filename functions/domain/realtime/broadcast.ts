import { boundIfSet } from '#shared/bindings';
import { chunksWithin } from '#shared/chunks';
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
  /** One frame (jobs queued before `frames` existed carry only this). */
  readonly frame?: unknown;
  /** Frames posted to each connection in this order: a broadcast's one, or a hot room's window. */
  readonly frames?: readonly unknown[];
  readonly connectionIds: readonly string[];
}

export interface BroadcastResult {
  /** Posted by this call. */
  readonly sent: number;
  /** Handed to the realtime workers (rooms past `REALTIME_FANOUT_QUEUE_THRESHOLD`). */
  readonly queued: number;
}

/** Frames one fan-out job carries at most, in encoded bytes: well inside SQS's 256 KB message. */
const FAN_OUT_JOB_FRAME_BYTES = 192 * 1024;

const encodedSize = (frame: unknown) => Buffer.byteLength(typeof frame === 'string' ? frame : JSON.stringify(frame));

/**
 * Posts frames, in order, to connections: from here with bounded parallelism, or past
 * `REALTIME_FANOUT_QUEUE_THRESHOLD` connections as fan-out jobs of `REALTIME_FANOUT_BATCH_SIZE`
 * connections each carrying all the frames, so each connection still gets them in order (a window
 * too big for one job is cut, and its parts may then overtake each other). Answers the connections
 * found gone, for the caller to forget once.
 */
export async function postInOrder(targets: readonly string[], frames: readonly unknown[]): Promise<BroadcastResult & { gone: string[] }> {
  if (targets.length === 0 || frames.length === 0) return { sent: 0, queued: 0, gone: [] };
  if (targets.length > config.REALTIME_FANOUT_QUEUE_THRESHOLD && boundIfSet('queue:Realtime')) {
    const chunks = chunksWithin(frames, { maxBytes: FAN_OUT_JOB_FRAME_BYTES, bytesOf: encodedSize });
    const jobs: FanOutJob[] = [];
    for (let start = 0; start < targets.length; start += config.REALTIME_FANOUT_BATCH_SIZE) {
      const connectionIds = targets.slice(start, start + config.REALTIME_FANOUT_BATCH_SIZE);
      for (const chunk of chunks) jobs.push({ kind: 'fanout', frames: chunk, connectionIds });
    }
    await sendRealtimeJobs(jobs);
    return { sent: 0, queued: targets.length, gone: [] };
  }
  const outcome = await postEach(targets, frames);
  return { sent: outcome.sent, queued: 0, gone: outcome.gone };
}

/** Each frame to every connection not found gone by an earlier one. */
async function postEach(targets: readonly string[], frames: readonly unknown[]): Promise<{ sent: number; gone: string[] }> {
  const gone = new Set<string>();
  let sent = 0;
  for (const frame of frames) {
    const outcome = await postFrames(gone.size === 0 ? targets : targets.filter((id) => !gone.has(id)), frame);
    sent += outcome.sent;
    for (const id of outcome.gone) gone.add(id);
  }
  return { sent, gone: [...gone] };
}

/**
 * Sends a frame to every connection of a room but `excludeConnectionId` (a connection, a Pusher
 * subscription, or a Pusher socket with all its subscriptions). The connection list is
 * read once (or given); small rooms are posted from here, large ones queued (`postInOrder`), so
 * parallel workers post them and this request returns.
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
  const outcome = await postInOrder(targets, [frame]);
  await forgetGoneAfterPosting(outcome.gone, { projectId, refs });
  return { sent: outcome.sent, queued: outcome.queued };
}

/** Posts a fan-out batch (the realtime worker's half of `postInOrder`). */
export async function deliverFanOut(job: FanOutJob): Promise<number> {
  const outcome = await postEach(job.connectionIds, job.frames ?? [job.frame]);
  await forgetGoneAfterPosting(outcome.gone);
  return outcome.sent;
}
