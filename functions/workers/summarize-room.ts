import { QuotaExceededError } from '#domain/ai/quota';
import { type RoomSummaryJob, summarizeRoom } from '#domain/ai/room-summaries';
import { sqsBatchHandler } from '#edge/sqs-batch';
import { logger } from '#shared/logger';

/** The room summary queue's consumer: one job, one summary. */
export const handler = sqsBatchHandler('summarizing a room', async (body) => {
  try {
    await summarizeRoom(body as RoomSummaryJob);
  } catch (error) {
    // Out of quota until next month: retrying would only fail again; the next message queues anew.
    if (error instanceof QuotaExceededError) {
      logger.warn('room summary skipped: quota used up', { projectId: (body as RoomSummaryJob).projectId });
      return;
    }
    throw error;
  }
});
