import { transcribeVoiceMessage } from '#domain/attachments/voice';
import { sqsBatchHandler } from '#edge/sqs-batch';
import type { TranscriptionJob } from '#shared/queue';

/** The transcription queue's consumer: one voice message, one transcript. */
export const handler = sqsBatchHandler('transcribing a voice message', async (body) => {
  await transcribeVoiceMessage(body as TranscriptionJob);
});
