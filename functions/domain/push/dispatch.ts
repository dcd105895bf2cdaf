import { mentionedUserIds } from '#domain/events/message-events';
import { onceFor } from '#domain/events/once';
import { sendingConfig } from '#domain/push/config';
import { type PushBatch, sendPushBatch } from '#domain/push/send';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { connectedUserIds } from '#shared/db/connection';
import type { PushTarget } from '#shared/db/push';
import { roomRoster } from '#shared/db/push-roster';
import { findRoom, type RoomItem } from '#shared/db/room';
import type { DomainEvent } from '#shared/events';
import { sendPushBatches } from '#shared/queue';

/**
 * Who is notified of a new message, and how:
 * - web push: every member with an active subscription except the author (the spec);
 * - mobile push: members with devices who have no open connection to the room, and, connected or
 *   not, the @-mentioned and the other member of a dm (docs/api.md "Push").
 * Recipients come from the room's push roster: one Query whatever the room's size. Up to
 * `PUSH_INLINE_RECIPIENTS` deliveries are sent here; more go to the push queue in batches of
 * `PUSH_BATCH_SIZE`, so no single invocation loops over thousands of members.
 */

/** Room type and e2e flag change rarely; a message burst reads them once per instance. */
const roomCache = new TtlCache<RoomItem>(config.CACHE_TTL_MS);
async function roomOf(projectId: string, roomId: string): Promise<RoomItem | undefined> {
  const cacheKey = `${projectId}\u0000${roomId}`;
  const cached = roomCache.get(cacheKey);
  if (cached) return cached;
  const room = await findRoom(projectId, roomId);
  if (room) roomCache.set(cacheKey, room);
  return room;
}

/** A message stored this long before it was announced was imported or backdated. */
const BACKDATED_AFTER_MS = 10 * 60 * 1000;

export interface DispatchResult {
  readonly deliveries: number;
  readonly queuedBatches: number;
}

/**
 * Plans and starts the pushes of one stored message, once per event however often the fan-out
 * delivers it (the claim is only taken when there is someone to notify).
 */
export async function dispatchMessagePush(event: DomainEvent<'message.created'>): Promise<DispatchResult> {
  const { projectId, payload: message } = event;
  // An imported or backdated message is history arriving, not news: nobody is woken for it.
  if (Date.parse(event.createdAt) - Date.parse(message.createdAt) > BACKDATED_AFTER_MS) return { deliveries: 0, queuedBatches: 0 };
  const roster = (await roomRoster(projectId, message.roomId)).filter((entry) => entry.userId !== message.userId);
  if (roster.length === 0) return { deliveries: 0, queuedBatches: 0 };
  const [room, settings] = await Promise.all([roomOf(projectId, message.roomId), sendingConfig(projectId)]);
  if (!room) return { deliveries: 0, queuedBatches: 0 };

  const hasDevices = roster.some((entry) => entry.targets.some((target) => target.kind === 'device'));
  const alwaysMobile = new Set(
    room.type === 'dm' ? roster.map((entry) => entry.userId) : mentionedUserIds(message.content, message.userId),
  );
  const connected = hasDevices ? await connectedUserIds(projectId, message.roomId) : new Set<string>();
  const deliveries: { userId: string; target: PushTarget }[] = [];
  for (const entry of roster) {
    const mobile = alwaysMobile.has(entry.userId) || !connected.has(entry.userId);
    for (const target of entry.targets) {
      if (target.kind === 'web' ? settings.webPushEnabled : mobile) deliveries.push({ userId: entry.userId, target });
    }
  }
  if (deliveries.length === 0) return { deliveries: 0, queuedBatches: 0 };

  const notice: PushBatch['message'] = {
    roomId: message.roomId,
    messageId: message.messageId,
    userId: message.userId,
    // Ciphertext of an e2e room never goes to a push provider.
    // By code points, so a preview never ends in half a surrogate pair.
    preview: room.e2eEnabled ? null : Array.from(message.content).slice(0, config.PUSH_PREVIEW_LENGTH).join(''),
  };
  const inline = deliveries.length <= config.PUSH_INLINE_RECIPIENTS;
  const batches: PushBatch[] = [];
  const size = inline ? deliveries.length : config.PUSH_BATCH_SIZE;
  for (let start = 0; start < deliveries.length; start += size) {
    batches.push({ projectId, message: notice, deliveries: deliveries.slice(start, start + size) });
  }
  const ran = await onceFor('PushDispatcher', event, async () => {
    if (inline) await sendPushBatch(batches[0] as PushBatch, settings);
    else await sendPushBatches(batches);
  });
  if (!ran) return { deliveries: 0, queuedBatches: 0 };
  return { deliveries: deliveries.length, queuedBatches: inline ? 0 : batches.length };
}
