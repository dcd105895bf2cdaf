import * as z from '#shared/schema';
import { messageSk, roomMessagesPk } from './keys';

export const moderationLabel = z.object({
  label: z.literal('auto_flag'),
  reason: z.string(),
});

/**
 * A message, in its room's message partition, sorted by id. Ids are derived from `createdAt`
 * (milliseconds × 1000 + a sub-millisecond suffix), so id order is history order and a backdated
 * import lands in its place without a second index (docs/data-model.md).
 */
export const messageItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  id: z.number().check(z.int()),
  userId: z.string(),
  content: z.string(),
  parent_id: z.nullable(z.number().check(z.int())),
  attachments: z.array(z.string()),
  clientMessageId: z.nullable(z.string()),
  createdAt: z.string(),
  moderation: z.nullable(moderationLabel),
});
export type MessageItem = z.infer<typeof messageItem>;

export const messageKey = (projectId: string, roomId: string, messageId: number) => ({
  pk: roomMessagesPk(projectId, roomId),
  sk: messageSk(messageId),
});

/**
 * Guards `clientMessageId` uniqueness within a room. Written before the message, so a retry finds
 * the id the first attempt chose.
 */
export const clientMessageGuardKey = (projectId: string, roomId: string, clientMessageId: string) => ({
  pk: roomMessagesPk(projectId, roomId),
  sk: `CMID#${clientMessageId}`,
});

export function toMessage(item: MessageItem) {
  return {
    id: item.id,
    roomId: item.roomId,
    userId: item.userId,
    content: item.content,
    parent_id: item.parent_id,
    attachments: item.attachments,
    clientMessageId: item.clientMessageId,
    createdAt: item.createdAt,
    moderation: item.moderation,
  };
}
export type Message = ReturnType<typeof toMessage>;
