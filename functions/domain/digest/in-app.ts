import { createNotification } from '#domain/notifications/inbox';
import { type DigestContent, digestSummaryLines, digestTitle } from './content';

/**
 * The in-app channel: the digest as a notification of the user's inbox (the inbox area owns it,
 * its `notification` frame and its webhook events). Its source id is the date, so the inbox's own
 * idempotency agrees with the delivery claim.
 */
export async function notifyInApp(projectId: string, userId: string, content: DigestContent, now: Date): Promise<void> {
  await createNotification({
    projectId,
    userId,
    kind: 'digest',
    sourceId: `digest#${content.digestDate}`,
    createdAt: now.toISOString(),
    title: digestTitle(content),
    body: digestSummaryLines(content),
    data: {
      digestDate: content.digestDate,
      since: content.since,
      rooms: content.rooms.map((room) => ({
        roomId: room.roomId,
        roomName: room.roomName,
        messageCount: room.messageCount,
        moreThanCounted: room.moreThanCounted,
        ...(room.summary ? { summary: room.summary } : {}),
        topMessageIds: room.topMessages.map((message) => message.id),
      })),
    },
  });
}
