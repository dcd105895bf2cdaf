import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { eventSubscribers, queueConsumers } from '#wiring';
import type { HandlerHost } from './handlers';
import type { InProcessRequestHandler } from './in-process-handler';
import { type LocalQueueConsumer, type QueueConsumerStats, type ReceiverContext, receive } from './queues/receiver';
import { LOCAL_REGION } from './sqs-local';

export type { LocalQueueConsumer, QueueConsumerStats } from './queues/receiver';

/** Every queue-fed function of the wiring table; an event subscriber reads the queue named after it. */
export const localQueueConsumers: readonly LocalQueueConsumer[] = [
  ...queueConsumers,
  ...eventSubscribers.map((subscriber) => ({ ...subscriber, queue: subscriber.id })),
];

export interface QueueConsumers {
  stats(): QueueConsumerStats;
  stop(): Promise<void>;
}

export interface QueueConsumerOptions {
  readonly sqsEndpoint: string;
  /** The SQS stand-in's in-process handler; without it, HTTP to `sqsEndpoint`. */
  readonly requestHandler?: InProcessRequestHandler;
  /** Signs the consumers' requests; the stand-in checks no signature, so the runtime passes one that skips SigV4. */
  readonly signer?: SQSClientConfig['signer'];
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly handlers: HandlerHost;
  /** Only these consumer ids. */
  readonly only?: readonly string[];
  /** All consumers but these ids. */
  readonly except?: readonly string[];
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
export function startQueueConsumers(options: QueueConsumerOptions): QueueConsumers {
  const context: ReceiverContext = {
    client: consumerClient(options),
    handlers: options.handlers,
    counts: { receiveRequests: 0, nonEmptyReceives: 0, deleteRequests: 0, invocations: 0, messages: 0 },
    state: { stopped: false },
  };
  const subscriberIds = new Set(eventSubscribers.map((subscriber) => subscriber.id));
  const chosen = localQueueConsumers.filter(
    (consumer) =>
      (!options.only || options.only.includes(consumer.id)) &&
      !options.except?.includes(consumer.id) &&
      // The stand-in made no queue for a subscriber whose feature is off (`startSqsLocal`): nothing to poll.
      !(subscriberIds.has(consumer.id) && !options.queueUrls[consumer.queue]),
  );
  const loops = chosen.map((consumer) => {
    const queueUrl = options.queueUrls[consumer.queue];
    if (!queueUrl) throw new Error(`Consumer ${consumer.id} names unknown queue ${consumer.queue}`);
    return receive(context, consumer, queueUrl);
  });
  return {
    stats: () => ({ ...context.counts }),
    stop: async () => {
      context.state.stopped = true;
      await Promise.all(loops);
      context.client.destroy();
    },
  };
}

function consumerClient(options: QueueConsumerOptions): SQSClient {
  return new SQSClient({
    endpoint: options.sqsEndpoint,
    region: LOCAL_REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
    // The stand-in computes the digests itself; checking them again here is Lambda's poller's work.
    md5: false,
    ...(options.signer ? { signer: options.signer } : {}),
    ...(options.requestHandler ? { requestHandler: options.requestHandler } : {}),
  });
}
