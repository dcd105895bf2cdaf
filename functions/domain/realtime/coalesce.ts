import type { DynamoDBRecord } from 'aws-lambda';
import type { ConnectionRef } from '#shared/db/connection';
import { type MessageItem, toMessage } from '#shared/db/message';
import { insertedItem } from '#shared/db/stream-record';
import { EventCatalogueError } from '#shared/events';
import { logger } from '#shared/logger';
import { parseSubscriptionId, socketOf } from '#shared/pusher-protocol';
import { postInOrder } from './broadcast';
import { roomConnections } from './connections';
import { forgetGone } from './presence';

/** API Gateway bills a frame per 32 KB: a batch frame is never larger. */
export const BATCH_FRAME_MAX_BYTES = 32_768;

const BATCH_OPENING = '{"type":"batch","frames":[';
const BATCH_CLOSING = ']}';

/**
 * Packs encoded frames, in order, into as few batch frames (`{"type":"batch","frames":[…]}`) of at
 * most `maxBytes` (UTF-8) as they fit in. A frame that ends up alone is sent plain, never wrapped
 * (so is one too big for any batch).
 */
export function packFrames(frames: readonly string[], maxBytes = BATCH_FRAME_MAX_BYTES): string[] {
  const packed: string[] = [];
  let current: string[] = [];
  let size = 0;
  const flush = () => {
    if (current.length === 1) packed.push(current[0] as string);
    else if (current.length > 1) packed.push(`${BATCH_OPENING}${current.join(',')}${BATCH_CLOSING}`);
    current = [];
    size = 0;
  };
  for (const frame of frames) {
    const bytes = Buffer.byteLength(frame);
    // The opening and closing, the frames and a comma between each two.
    const grown = (current.length === 0 ? BATCH_OPENING.length + BATCH_CLOSING.length : size + 1) + bytes;
    if (current.length > 0 && grown > maxBytes) flush();
    size = (current.length === 0 ? BATCH_OPENING.length + BATCH_CLOSING.length : size + 1) + bytes;
    current.push(frame);
  }
  flush();
  return packed;
}

/** A coalesced message to deliver: its record's place in the batch, the message, its frame encoded once. */
interface Pending {
  readonly index: number;
  readonly message: MessageItem;
  readonly frame: { type: 'message'; message: ReturnType<typeof toMessage> };
  readonly encoded: string;
}

/** The coalesced messages of a stream batch by room, each room's in stream order (its shard's order). */
function byRoom(records: readonly DynamoDBRecord[]): Map<string, Pending[]> {
  const rooms = new Map<string, Pending[]>();
  records.forEach((record, index) => {
    let inserted: ReturnType<typeof insertedItem>;
    try {
      inserted = insertedItem(record);
    } catch (error) {
      if (!(error instanceof EventCatalogueError)) throw error;
      // It would fail the same way on every retry and hold back the shard: the publisher reports it.
      logger.error('a coalesced message record cannot be read; passed over', { error, sequenceNumber: record.dynamodb?.SequenceNumber });
      return;
    }
    if (inserted?.kind !== 'message' || inserted.message.delivery !== 'coalesced') return;
    const { message } = inserted;
    const frame = { type: 'message' as const, message: toMessage(message) };
    const key = `${message.projectId}\u0000${message.roomId}`;
    const pending = { index, message, frame, encoded: JSON.stringify(frame) };
    const room = rooms.get(key);
    if (room) room.push(pending);
    else rooms.set(key, [pending]);
  });
  return rooms;
}

/** The message's sender and its other subscriptions (a Pusher socket) never get it: it has the `ack`. */
const isSender = (connectionId: string, sender: string | undefined) =>
  sender !== undefined && (connectionId === sender || socketOf(connectionId) === sender);

/**
 * One room's share of a window: its connections read once, then batch frames to the connections
 * that asked for them (`batch=1`) and each message its own frame, in order, to the rest.
 */
async function deliverRoom(projectId: string, roomId: string, pending: readonly Pending[]): Promise<void> {
  const refs = await roomConnections(projectId, roomId);
  // Pusher subscriptions speak the Pusher protocol, which has no batch frame.
  const batching = (ref: ConnectionRef) => ref.batch === true && !parseSubscriptionId(ref.connectionId);
  // Connections that sent none of the window's messages all get the same frames; each sender its own.
  const senders = [...new Set(pending.flatMap((entry) => entry.message.senderConnectionId ?? []))];
  const groups = new Map<string, { batch: string[]; single: string[] }>();
  for (const ref of refs) {
    const self = senders.find((sender) => isSender(ref.connectionId, sender)) ?? '';
    let group = groups.get(self);
    if (!group) {
      group = { batch: [], single: [] };
      groups.set(self, group);
    }
    (batching(ref) ? group.batch : group.single).push(ref.connectionId);
  }
  const outcomes = await Promise.all(
    [...groups].flatMap(([self, group]) => {
      const theirs = pending.filter((entry) => self === '' || entry.message.senderConnectionId !== self);
      return [
        postInOrder(group.batch, packFrames(theirs.map((entry) => entry.encoded))),
        postInOrder(
          group.single,
          theirs.map((entry) => entry.frame),
        ),
      ];
    }),
  );
  const gone = outcomes.flatMap((outcome) => outcome.gone);
  if (gone.length === 0) return;
  // The frames are out: a cleanup failure must not make the stream deliver them again.
  await forgetGone(gone, { listed: { projectId, refs } }).catch((error) =>
    logger.error('forgetting gone connections failed', { error: error as Error }),
  );
}

/**
 * Delivers the coalesced messages of a stream batch (docs/architecture.md, "Hot rooms: coalesced
 * delivery"): grouped by room in stream order, one connection read per room. Answers the index of
 * the first record of the first room whose delivery failed (the stream hands that record and all
 * after it over again: rooms already delivered then repeat frames, which clients drop by message
 * id), or `undefined` when every room's went out.
 */
export async function deliverRoomBatches(records: readonly DynamoDBRecord[]): Promise<number | undefined> {
  let firstFailed: number | undefined;
  await Promise.all(
    [...byRoom(records).values()].map(async (pending) => {
      const { projectId, roomId } = (pending[0] as Pending).message;
      try {
        await deliverRoom(projectId, roomId, pending);
      } catch (error) {
        logger.error('delivering a coalesced room window failed', { error: error as Error, projectId, roomId });
        const index = (pending[0] as Pending).index;
        firstFailed = firstFailed === undefined ? index : Math.min(firstFailed, index);
      }
    }),
  );
  return firstFailed;
}
