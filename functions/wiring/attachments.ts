import type { Binding } from './bindings.ts';
import { messageWriter } from './messages.ts';
import type { Area, QueueDefinition, RateLimit } from './types.ts';

/** Uploads and voice messages share one budget per user: both store an object. */
const uploadLimit: RateLimit = { bucket: 'uploads', per: 'user', setting: 'RATE_LIMIT_UPLOADS_PER_MINUTE' };

export const transcriptionQueue: QueueDefinition = {
  id: 'Transcription',
  // Six times the transcriber's timeout, as AWS advises for SQS event sources.
  visibilityTimeoutSeconds: 540,
  maxReceiveCount: 3,
  summary: 'Voice messages waiting for their transcript',
};

/** The voice route stores the audio, sends the message through the pipeline and queues its transcript. */
const voiceSender: readonly Binding[] = [...messageWriter, 'bucket:attachments:write', 'queue:Transcription', 'outbound:ai', 'link:api'];

/** File uploads to the attachments bucket, the links that serve them, and voice messages with their transcripts. */
export const attachments: Area = {
  id: 'Attachments',
  summary: 'File uploads (S3), the attachment links that serve them, voice messages and their transcripts',
  httpRoutes: [
    {
      id: 'UploadAttachment',
      method: 'POST',
      path: '/upload',
      handler: 'http/attachments/upload.ts',
      auth: 'user',
      rateLimit: uploadLimit,
      bindings: ['table:read', 'table:write', 'bucket:attachments:write', 'link:api'],
      summary: 'Store a file (raw body or multipart/form-data) and answer its /attachments URL',
    },
    {
      id: 'GetAttachment',
      method: 'GET',
      path: '/attachments/{projectId}/{ownerRef}/{objectId}/{filename}',
      handler: 'http/attachments/get-attachment.ts',
      // The URL is the capability (an unguessable id, docs/api.md "Attachments"): <img> and <audio> send no token.
      auth: 'none',
      bindings: ['bucket:attachments:read'],
      summary: 'Redirect to a short-lived presigned S3 URL of an uploaded file',
    },
    {
      id: 'SendVoiceMessage',
      method: 'POST',
      path: '/messages/voice',
      handler: 'http/attachments/send-voice.ts',
      auth: 'user',
      flag: 'voice_messages',
      rateLimit: uploadLimit,
      bindings: voiceSender,
      summary: 'Store an audio recording and send it to a room as a voice message; its transcript follows',
    },
  ],
  queues: [transcriptionQueue],
  queueConsumers: [
    {
      id: 'VoiceTranscriber',
      queue: 'Transcription',
      handler: 'workers/transcribe-voice.ts',
      batchSize: 1,
      maxConcurrency: 2,
      // Above the transcription call's budget (60 s).
      timeoutSeconds: 90,
      bindings: ['table:read', 'table:write', 'bucket:attachments:read', 'outbound:ai', 'secret:ai-key'],
      summary: 'Transcribes one voice message and announces message.updated (transcribed)',
    },
  ],
};
