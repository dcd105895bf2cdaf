import type { DynamoDBRecord } from 'aws-lambda';
import { config } from '#shared/config';
import { setRoomCoalesceUntil } from '#shared/db/room';
import { insertedItem } from '#shared/db/stream-record';
import { logger } from '#shared/logger';

/** The sliding window the rate is counted over: a rate per second. */
const RATE_WINDOW_MS = 1000;
/**
 * A message written longer ago than this (a backdated import, a stream backlog after an outage)
 * says nothing about the room's rate now.
 */
const STALE_AFTER_MS = 10_000;
/** Rooms tracked by one instance at most; past it the coolest are forgotten. */
const MAX_ROOMS = 10_000;

interface Heat {
  /** The room's recent messages: createdAt (epoch ms) by id, so a batch the stream hands over again is not counted twice. */
  times: Map<number, number>;
  /** The hold this instance last set (or learnt was set): no write while more than half of it remains. */
  until: number;
}

/**
 * Per-instance counts. A room's messages share its partition key, so they all travel on one stream
 * shard, read by one publisher invocation at a time; Lambda does not promise the shard's next batch
 * the same instance, so a room's count may be split between instances and a room just past the
 * threshold found hot late or not at all (it then stays on the sender's path: nothing is lost).
 */
const rooms = new Map<string, Heat>();

/**
 * Measures the rooms of a stream batch (the event publisher's, which sees every message) and marks
 * those past `REALTIME_COALESCE_THRESHOLD_PER_SECOND` coalesced for `REALTIME_COALESCE_HOLD_SECONDS`:
 * one UpdateItem per hot room, and again only when less than half the hold remains, never one per
 * message. A failure is logged, not thrown: the events still go out, and the next batch tries again.
 */
export async function measureRoomHeat(records: readonly DynamoDBRecord[], now = Date.now()): Promise<void> {
  const touched = new Map<string, { projectId: string; roomId: string }>();
  for (const record of records) {
    let inserted: ReturnType<typeof insertedItem>;
    try {
      inserted = insertedItem(record);
    } catch {
      continue; // The publisher reports a record it cannot read.
    }
    if (inserted?.kind !== 'message') continue;
    const { projectId, roomId, createdAt, id } = inserted.message;
    const at = Date.parse(createdAt);
    if (!(now - at < STALE_AFTER_MS)) continue;
    const key = `${projectId}\u0000${roomId}`;
    const heat = rooms.get(key) ?? { times: new Map(), until: 0 };
    heat.times.set(id, at);
    rooms.delete(key);
    rooms.set(key, heat); // Most recently active last: the first entries are the coolest.
    touched.set(key, { projectId, roomId });
  }
  const holdMs = config.REALTIME_COALESCE_HOLD_SECONDS * 1000;
  const writes: Promise<void>[] = [];
  for (const [key, room] of touched) {
    const heat = rooms.get(key) as Heat;
    const latest = Math.max(...heat.times.values());
    for (const [id, time] of heat.times) if (time <= latest - RATE_WINDOW_MS) heat.times.delete(id);
    if (heat.times.size <= config.REALTIME_COALESCE_THRESHOLD_PER_SECOND) continue;
    if (heat.until - now > holdMs / 2) continue;
    const until = now + holdMs;
    writes.push(
      setRoomCoalesceUntil(room.projectId, room.roomId, until).then(
        () => {
          // Set, or a later hold was there already (or the room is gone): either way no write for a while.
          heat.until = until;
        },
        (error) => logger.warn('marking a hot room coalesced failed', { error: error as Error, ...room }),
      ),
    );
  }
  await Promise.all(writes);
  for (const key of rooms.keys()) {
    if (rooms.size <= MAX_ROOMS) break;
    rooms.delete(key);
  }
}
