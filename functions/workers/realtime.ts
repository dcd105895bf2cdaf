import { deliverFanOut, type FanOutJob } from '#domain/realtime/broadcast';
import { type PusherWelcomeJob, welcomePusherSocket } from '#domain/realtime/pusher-sockets';
import { type WelcomeJob, welcome } from '#domain/realtime/welcome';
import { sqsBatchHandler } from '#edge/sqs-batch';
import { logger } from '#shared/logger';

type RealtimeJob = WelcomeJob | PusherWelcomeJob | FanOutJob;

/** Realtime queue consumer: the opening frames of new connections, and fan-out batches of large rooms. */
export const handler = sqsBatchHandler('realtime job', async (body, record) => {
  const job = body as RealtimeJob;
  if (job.kind === 'welcome') await welcome(job);
  else if (job.kind === 'pusher-welcome') await welcomePusherSocket(job);
  else if (job.kind === 'fanout') await deliverFanOut(job);
  else logger.warn('unknown realtime job', { messageId: record.messageId });
});
