import { acknowledgePushRecord } from '#shared/db/push-record';
import { NotFoundError } from '#shared/errors';
import { countMetric } from '#shared/metrics';

/**
 * A client confirms it received a push. Only the push's own recipient may: anyone else's id, or
 * an unknown one, is not found. Acknowledging twice is harmless and counts once, so the
 * `push_delivered` ÷ `push_sent` rate on the dashboard stays a rate.
 */
export async function acknowledgePush(projectId: string, userId: string, pushId: string) {
  const deliveredAt = new Date().toISOString();
  const before = await acknowledgePushRecord(projectId, userId, pushId, deliveredAt);
  if (!before) throw new NotFoundError('push_not_found', 'Push not found');
  const first = before.status !== 'delivered';
  if (first) countMetric('push_delivered', 1, { projectId });
  return {
    pushId,
    status: 'delivered' as const,
    deliveredAt: first ? deliveredAt : String(before.deliveredAt),
    channel: before.channel,
    roomId: before.roomId,
    messageId: before.messageId,
  };
}
