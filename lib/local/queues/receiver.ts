import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { HandlerHost } from '../handlers';
import { queueArnOf, toSqsRecord } from './sqs-event';

/** A function fed by a queue: a consumer of a shared queue, or an event subscriber of its own queue. */
export interface LocalQueueConsumer {
  readonly id: string;
  /** The queue's key in `queueUrls`. */
  readonly queue: string;
  readonly handler: string;
  readonly batchSize: number;
  readonly maxConcurrency: number;
}

/** What Lambda's pollers would have done on AWS: SQS requests and function invocations. */
export interface QueueConsumerStats {
  readonly receiveRequests: number;
  /** Receives that returned at least one message. */
  readonly nonEmptyReceives: number;
  readonly deleteRequests: number;
  readonly invocations: number;
  readonly messages: number;
}

/** What every receiver of one `startQueueConsumers` shares. */
export interface ReceiverContext {
  readonly client: SQSClient;
  readonly handlers: HandlerHost;
  readonly counts: Record<keyof QueueConsumerStats, number>;
  /** Set by `stop()`: receivers end after their current receive, and delete nothing more. */
  readonly state: { stopped: boolean };
}

/** Receives from one queue until stopped, with up to `maxConcurrency` batches in flight, then waits for them. */
export async function receive(context: ReceiverContext, consumer: LocalQueueConsumer, queueUrl: string): Promise<void> {
  const { client, counts, state } = context;
  const queueArn = queueArnOf(queueUrl);
  const inFlight = new Set<Promise<void>>();
  while (!state.stopped) {
    // Lambda runs up to `maxConcurrency` batches of one queue at once, and so does this.
    if (inFlight.size >= consumer.maxConcurrency) {
      await Promise.race(inFlight);
      continue;
    }
    try {
      const { Messages = [] } = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: consumer.batchSize,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      counts.receiveRequests++;
      if (Messages.length === 0 || state.stopped) continue;
      counts.nonEmptyReceives++;
      const batch = handleBatch(context, consumer, { queueUrl, queueArn }, Messages)
        .catch((error) => {
          if (!state.stopped) console.error(`deleting from ${consumer.queue} failed`, error);
        })
        .finally(() => inFlight.delete(batch));
      inFlight.add(batch);
    } catch (error) {
      if (!state.stopped) {
        console.error(`polling ${consumer.queue} failed`, error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
  await Promise.all(inFlight);
}

/**
 * Invokes the handler with one batch and deletes what it did not report as failed; a throw fails
 * the whole batch, so its messages come back after the visibility timeout, as on AWS.
 */
async function handleBatch(
  context: ReceiverContext,
  consumer: LocalQueueConsumer,
  queue: { readonly queueUrl: string; readonly queueArn: string },
  messages: readonly Message[],
): Promise<void> {
  const { counts } = context;
  counts.invocations++;
  counts.messages += messages.length;
  const event: SQSEvent = { Records: messages.map((message) => toSqsRecord(message, queue.queueArn)) };
  const response = (await context.handlers.invoke(consumer.handler, consumer.id, event).catch((error) => {
    console.error(`${consumer.id} failed`, error);
    return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
  })) as SQSBatchResponse | undefined;
  const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
  const done = messages.filter((message) => !failed.has(message.MessageId ?? ''));
  if (done.length === 0 || context.state.stopped) return;
  counts.deleteRequests++;
  await context.client.send(
    new DeleteMessageBatchCommand({
      QueueUrl: queue.queueUrl,
      Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
    }),
  );
}
