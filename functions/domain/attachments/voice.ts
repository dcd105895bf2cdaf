import { parseBuffer } from 'music-metadata';
import { isAiConfigured, requireAi } from '#domain/ai/assistant';
import { countInvocation, QuotaExceededError, requireQuota } from '#domain/ai/quota';
import { type StoredUpload, storeUpload, type UploadInput } from '#domain/attachments/files';
import { newEvent, outboxPut } from '#domain/events/outbox';
import { type SendResult, sendMessage } from '#domain/messages/pipeline';
import { accessRoom } from '#domain/rooms/rooms';
import { attachmentsBucket, getObject } from '#shared/attachments-bucket';
import type { UserPrincipal } from '#shared/auth';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import { setVoiceTranscriptPart } from '#shared/db/message';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { BadRequestError } from '#shared/errors';
import { logger } from '#shared/logger';
import { AiProviderError, transcribeAudio } from '#shared/providers/ai';
import { sendTranscriptionJob, type TranscriptionJob } from '#shared/queue';
import { secretValue } from '#shared/secrets';

export interface VoiceMessageInput {
  readonly roomId: string;
  readonly audio: UploadInput;
  /** The client's measure, used when the audio's own header does not say (a WebM from MediaRecorder often does not). */
  readonly durationMs?: number;
  readonly caption?: string;
  readonly clientMessageId?: string;
}

/** The text of a voice message without a caption: what clients without voice support, pushes and webhooks show. */
export const VOICE_MESSAGE_TEXT = '🎤 Voice message';

/**
 * A voice message: the caller may post in the room (checked before anything is stored), the audio
 * is stored as an upload (audio types only), its duration read from the audio (`music-metadata`),
 * else the client's `durationMs`, and the message goes through the one message pipeline with the
 * audio's link as its attachment. With AI configured its transcript is queued (`transcriptStatus:
 * pending`) and arrives later as `message.updated` (`transcribed`); without, there is none (`none`).
 */
export async function sendVoiceMessage(
  principal: UserPrincipal,
  input: VoiceMessageInput,
  sourceIp: string,
): Promise<SendResult & { upload: StoredUpload }> {
  attachmentsBucket();
  await accessRoom(principal, input.roomId, { join: false });
  const upload = await storeUpload(principal, input.audio, { audioOnly: true });
  const durationMs = await durationOf(input.audio.bytes, upload.contentType, input.durationMs);
  const transcribe = isAiConfigured();
  const result = await sendMessage(
    principal,
    {
      roomId: input.roomId,
      content: input.caption ?? VOICE_MESSAGE_TEXT,
      attachments: [upload.url],
      ...(input.clientMessageId ? { clientMessageId: input.clientMessageId } : {}),
    },
    { source: 'api', sourceIp, voice: { durationMs, transcript: null, transcriptStatus: transcribe ? 'pending' : 'none' } },
  );
  if (result.created && transcribe) {
    await sendTranscriptionJob({
      projectId: principal.projectId,
      roomId: input.roomId,
      messageId: result.message.id,
      key: upload.key,
      contentType: upload.contentType,
      filename: upload.filename,
    });
  }
  return { ...result, upload };
}

async function durationOf(audio: Buffer, contentType: string, given: number | undefined): Promise<number> {
  let measured: number | undefined;
  try {
    const seconds = (await parseBuffer(audio, { mimeType: contentType, size: audio.length }, { duration: true, skipCovers: true })).format
      .duration;
    if (seconds !== undefined && Number.isFinite(seconds) && seconds > 0) measured = Math.round(seconds * 1000);
  } catch (error) {
    logger.info('voice.duration_unreadable', { reason: (error as Error).message });
  }
  const durationMs = measured ?? given;
  if (durationMs === undefined) {
    throw new BadRequestError(
      'The duration of this audio cannot be read from it: send durationMs (milliseconds) with it',
      [{ field: 'durationMs', message: 'required for this audio' }],
      'voice_duration_unknown',
    );
  }
  if (durationMs > config.VOICE_MAX_DURATION_MS) {
    throw new BadRequestError(`Voice messages are limited to ${config.VOICE_MAX_DURATION_MS} ms; this one lasts ${durationMs} ms`, [
      { field: 'durationMs', message: `must be at most ${config.VOICE_MAX_DURATION_MS}` },
    ]);
  }
  return durationMs;
}

/**
 * The transcription job: the audio through the provider's `/audio/transcriptions`, then the
 * transcript on the message and its `message.updated` (`transcribed`, by `system`) in one
 * transaction. A provider that fails after its attempts, or a spent quota, ends the job with
 * `transcriptStatus: failed` (announced the same way, `transcript: null`). A repeated job, or a
 * message erased meanwhile, fails the write's condition and announces nothing.
 */
export async function transcribeVoiceMessage(job: TranscriptionJob): Promise<void> {
  const { projectId, roomId, messageId } = job;
  let transcript: string | null = null;
  try {
    const baseUrl = requireAi();
    await requireQuota(projectId);
    const audio = await getObject(job.key);
    if (!audio) throw new Error('The voice message’s audio is gone');
    const apiKey = boundIfSet('secret:ai-key') ? await secretValue('ai-key') : undefined;
    await countInvocation(projectId);
    transcript = await transcribeAudio({
      baseUrl,
      ...(apiKey ? { apiKey } : {}),
      model: config.AI_TRANSCRIPTION_MODEL,
      audio,
      filename: job.filename,
      contentType: job.contentType,
    });
  } catch (error) {
    if (!(error instanceof AiProviderError || error instanceof QuotaExceededError)) throw error;
    logger.warn('voice.transcription_failed', { projectId, roomId, messageId, reason: error.message });
  }
  const event = newEvent('message.updated', projectId, {
    roomId,
    messageId,
    change: 'transcribed',
    userId: 'system',
    at: new Date().toISOString(),
    transcript,
  });
  try {
    await transactWrite([setVoiceTranscriptPart(projectId, roomId, messageId, transcript), outboxPut(event)]);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
