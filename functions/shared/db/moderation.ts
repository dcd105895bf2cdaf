import * as z from '#shared/schema';
import { projectPk } from './keys';

/** The project's block list: case-insensitive substrings. */
export const blockListItem = z.object({
  pk: z.string(),
  sk: z.literal('BLOCKLIST'),
  terms: z.array(z.string()),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type BlockListItem = z.infer<typeof blockListItem>;
export const blockListKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'BLOCKLIST' as const });

/** One record per automatically flagged message; newest first by sort key. */
export const moderationRecordItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  userId: z.string(),
  label: z.literal('auto_flag'),
  reason: z.string(),
  matchedTerm: z.string(),
  createdAt: z.string(),
});
export type ModerationRecordItem = z.infer<typeof moderationRecordItem>;
export const moderationRecordsPk = (projectId: string) => `${projectPk(projectId)}#MODERATION`;

/** The project's automation log: what automatic rules did and why. */
export const automationEventsPk = (projectId: string) => `${projectPk(projectId)}#AUTOMATION`;

export function toModerationRecord(item: ModerationRecordItem) {
  return {
    roomId: item.roomId,
    messageId: item.messageId,
    userId: item.userId,
    label: item.label,
    reason: item.reason,
    matchedTerm: item.matchedTerm,
    createdAt: item.createdAt,
  };
}
