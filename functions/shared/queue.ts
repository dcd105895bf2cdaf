import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { sdkClientDefaults, sqsClientDefaults } from '#shared/aws-clients';
import { bound } from '#shared/bindings';
import { chunksWithin } from '#shared/chunks';
import { asciiJson } from '#shared/json';
import { traceIdAttributes } from '#shared/request-context';
import { captureClient } from '#shared/tracer';

/**
 * The queues live in this function's region, so requests go to the endpoint the SDK resolves
 * (`AWS_ENDPOINT_URL_SQS` in local mode) rather than to the host written in a queue URL.
 */
export const sqs = captureClient(
  new SQSClient({ maxAttempts: 3, useQueueUrlAsEndpoint: false, ...sdkClientDefaults, ...sqsClientDefaults }),
);

const SQS_BATCH_LIMIT = 10;

/** Sends realtime jobs (welcome frames, fan-out batches) to the realtime queue's workers. */
export async function sendRealtimeJobs(jobs: readonly { readonly kind: string }[]): Promise<void> {
  await sendBatches(
    bound('queue:Realtime'),
    jobs.map((job) => ({ body: job, attributes: { kind: { DataType: 'String', StringValue: job.kind } } })),
  );
}

/** Sends batches of push deliveries (`functions/domain/push/send.ts`) to the push senders. */
export async function sendPushBatches(batches: readonly object[]): Promise<void> {
  await sendBatches(
    bound('queue:PushSend'),
    batches.map((body) => ({ body, attributes: {} })),
  );
}

/** Queues one room summary job (`functions/domain/ai/room-summaries.ts`). */
export async function sendRoomSummaryJob(job: {
  readonly kind: string;
  readonly projectId: string;
  readonly roomId: string;
  readonly jobId: string;
}): Promise<void> {
  await sendBatches(bound('queue:RoomSummary'), [{ body: job, attributes: {} }]);
}

/** One voice message to transcribe (`functions/domain/attachments/voice.ts`): where its audio is. */
export interface TranscriptionJob {
  readonly projectId: string;
  readonly roomId: string;
  readonly messageId: number;
  /** The audio's key in the attachments bucket. */
  readonly key: string;
  readonly contentType: string;
  readonly filename: string;
}

/** Queues a voice message's transcript, off the request path. */
export async function sendTranscriptionJob(job: TranscriptionJob): Promise<void> {
  await sendBatches(bound('queue:Transcription'), [{ body: job, attributes: {} }]);
}

/** Sends daily digest jobs (`functions/domain/digest/run.ts`) to the digest workers. */
export async function sendDigestJobs(jobs: readonly object[]): Promise<void> {
  await sendBatches(
    bound('queue:Digest'),
    jobs.map((body) => ({ body, attributes: {} })),
  );
}

/** SQS caps a batch at 10 entries and 256 KiB in total; a little headroom for attributes. */
const SQS_BATCH_BYTES = 240 * 1024;

/**
 * Sends in as few requests as SQS allows. Entries SQS reports as failed are retried once, then
 * the call throws so the caller's error path (and logs) sees the loss.
 */
async function sendBatches(
  queueUrl: string,
  messages: readonly { body: unknown; attributes: Record<string, { DataType: string; StringValue: string }> }[],
): Promise<void> {
  // Each job carries the trace id of the request that queued it; its consumer makes it current again.
  const traced = traceIdAttributes();
  const entries = messages.map((message) => ({
    MessageBody: asciiJson(message.body),
    MessageAttributes: { ...message.attributes, ...traced },
  }));
  const chunks = chunksWithin(entries, {
    maxBytes: SQS_BATCH_BYTES,
    maxEntries: SQS_BATCH_LIMIT,
    bytesOf: (entry) => Buffer.byteLength(entry.MessageBody),
  });
  for (const chunk of chunks) {
    let batch = chunk.map((entry, index) => ({ Id: String(index), ...entry }));
    for (let attempt = 1; batch.length > 0; attempt++) {
      const result = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: batch }));
      const failedIds = new Set((result.Failed ?? []).map((failure) => failure.Id));
      batch = batch.filter((entry) => failedIds.has(entry.Id));
      if (batch.length > 0 && attempt >= 2) {
        throw new Error(`SQS rejected ${batch.length} message(s): ${JSON.stringify(result.Failed)}`);
      }
    }
  }
}
