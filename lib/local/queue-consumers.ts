import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { eventSubscribers, queueConsumers } from '#wiring';
import type { HandlerHost } from './handlers';
import type { InProcessRequestHandler } from './in-process-handler';
import { LOCAL_REGION } from './sqs-local';

function toRecord(message: Message, queueArn: string): SQSEvent['Records'][number] {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { stringValue: value.StringValue, dataType: value.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: LOCAL_REGION,
  };
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

/** A function fed by a queue: a consumer of a shared queue, or an event subscriber of its own queue. */
export interface LocalQueueConsumer {
  readonly id: string;
  /** The queue's key in `queueUrls`. */
  readonly queue: string;
  readonly handler: string;
  readonly batchSize: number;
  readonly maxConcurrency: number;
}

/** Every queue-fed function of the wiring table; an event subscriber reads the queue named after it. */
export const localQueueConsumers: readonly LocalQueueConsumer[] = [
  ...queueConsumers,
  ...eventSubscribers.map((subscriber) => ({ ...subscriber, queue: subscriber.id })),
];

export interface QueueConsumers {
  stats(): QueueConsumerStats;
  stop(): Promise<void>;
}

/**
 * The local stand-in for Lambda's SQS event sources: every queue-fed function of the wiring table
 * has one long-polling receiver that hands each batch, in the SQS event shape, to its handler, with
 * up to `maxConcurrency` batches in flight at once, and deletes what the handler did not report as
 * failed (partial batch responses), so failures come back after the visibility timeout and end in
 * the dead-letter queue, as on AWS.
 *
 * One receiver per queue rather than one per concurrent batch: the stand-in wakes every waiting
 * receive when a message lands, so `maxConcurrency` waiting receivers meant that many receives per
 * message, all but one of them empty, each a full SDK round trip in this process (Lambda's pollers
 * cost the function nothing on AWS, so here they should cost as little as they can).
 */
export function startQueueConsumers(options: {
  sqsEndpoint: string;
  /** The SQS stand-in's in-process handler; without it, HTTP to `sqsEndpoint`. */
  requestHandler?: InProcessRequestHandler;
  /** Signs the consumers' requests; the stand-in checks no signature, so the runtime passes one that skips SigV4. */
  signer?: SQSClientConfig['signer'];
  queueUrls: Readonly<Record<string, string>>;
  handlers: HandlerHost;
  /** Only these consumer ids. */
  only?: readonly string[];
  /** All consumers but these ids. */
  except?: readonly string[];
}): QueueConsumers {
  const client = new SQSClient({
    endpoint: options.sqsEndpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
    // The stand-in computes the digests itself; checking them again here is Lambda's poller's work.
    md5: false,
    ...(options.signer ? { signer: options.signer } : {}),
    ...(options.requestHandler ? { requestHandler: options.requestHandler } : {}),
  });
  let stopped = false;
  const counts = { receiveRequests: 0, nonEmptyReceives: 0, deleteRequests: 0, invocations: 0, messages: 0 };

  /** Invokes the handler with one batch and deletes what it did not report as failed. */
  async function handle(consumer: LocalQueueConsumer, queueUrl: string, queueArn: string, messages: readonly Message[]): Promise<void> {
    counts.invocations++;
    counts.messages += messages.length;
    const event: SQSEvent = { Records: messages.map((message) => toRecord(message, queueArn)) };
    const response = (await options.handlers.invoke(consumer.handler, consumer.id, event).catch((error) => {
      console.error(`${consumer.id} failed`, error);
      return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
    })) as SQSBatchResponse | undefined;
    const failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    const done = messages.filter((message) => !failed.has(message.MessageId ?? ''));
    if (done.length === 0 || stopped) return;
    counts.deleteRequests++;
    await client.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }

  async function consume(consumer: LocalQueueConsumer, queueUrl: string): Promise<void> {
    const queueArn = `arn:aws:sqs:${LOCAL_REGION}:000000000000:${queueUrl.split('/').pop()}`;
    const inFlight = new Set<Promise<void>>();
    while (!stopped) {
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
        if (Messages.length === 0 || stopped) continue;
        counts.nonEmptyReceives++;
        const batch = handle(consumer, queueUrl, queueArn, Messages)
          .catch((error) => {
            if (!stopped) console.error(`deleting from ${consumer.queue} failed`, error);
          })
          .finally(() => inFlight.delete(batch));
        inFlight.add(batch);
      } catch (error) {
        if (!stopped) {
          console.error(`polling ${consumer.queue} failed`, error);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    }
    await Promise.all(inFlight);
  }

  const chosen = localQueueConsumers.filter(
    (consumer) => (!options.only || options.only.includes(consumer.id)) && !options.except?.includes(consumer.id),
  );
  const loops = chosen.map((consumer) => {
    const queueUrl = options.queueUrls[consumer.queue];
    if (!queueUrl) throw new Error(`Consumer ${consumer.id} names unknown queue ${consumer.queue}`);
    return consume(consumer, queueUrl);
  });

  return {
    stats: () => ({ ...counts }),
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
      client.destroy();
    },
  };
}
