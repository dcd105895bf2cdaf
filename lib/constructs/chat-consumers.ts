import { Duration } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import { type QueueConsumer, queueConsumers } from '../routes.ts';
import { type ChatConfig, sharedEnvironment } from '../stacks/chat-config.ts';
import { ChatFunction, type ChatResources } from './chat-function.ts';
import type { ChatQueues } from './chat-queues.ts';

/** Properties of {@link ChatConsumers}. */
export interface ChatConsumersProps {
  /** The queues of the wiring table; each consumer names one by id. */
  readonly queues: ChatQueues;
  /** What the consumers' `access` lists may refer to. */
  readonly resources: ChatResources;
  /** Shared settings: environment variables, log removal. */
  readonly config: ChatConfig;
}

/**
 * The queue consumers of `lib/routes.ts` (`queueConsumers`): one {@link ChatFunction} each, fed by
 * an SQS event source with partial batch responses (`ReportBatchItemFailures`), so only the
 * records a handler reports as failed come back, and after `maxReceiveCount` receives go to the
 * queue's dead-letter queue. No batching window: a batch is handed over as soon as messages arrive.
 * The event source's maximum concurrency is the consumer's `maxConcurrency`: it bounds how many
 * batches run at once (and so the load a consumer puts on the table and on API Gateway's
 * `@connections`) without reserving concurrency for the function.
 *
 * The synth fails unless the queue's visibility timeout exceeds the consumer's timeout; otherwise
 * a message could become visible again, and be processed twice, while its first batch still runs.
 * It also fails for a `maxConcurrency` SQS event sources do not accept (2 to 1,000).
 */
export class ChatConsumers extends Construct {
  /** Every consumer function, by consumer id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;

  constructor(scope: Construct, id: string, props: ChatConsumersProps) {
    super(scope, id);
    const { config } = props;

    const functions = new Map<string, ChatFunction>();
    for (const consumer of queueConsumers) {
      const { definition, queue } = props.queues.get(consumer.queue);
      assertVisibilityExceedsTimeout(consumer, definition.visibilityTimeoutSeconds);
      assertMaxConcurrencyInRange(consumer);
      const fn = new ChatFunction(this, consumer.id, {
        handlerPath: consumer.handler,
        description: `Consumer of the ${consumer.queue} queue: ${consumer.summary}`,
        timeout: Duration.seconds(consumer.timeoutSeconds),
        environment: sharedEnvironment(config),
        logRemovalPolicy: config.removalPolicy,
      });
      fn.grantAccess(consumer.access, props.resources);
      fn.addEventSource(
        new SqsEventSource(queue, {
          batchSize: consumer.batchSize,
          maxConcurrency: consumer.maxConcurrency,
          reportBatchItemFailures: true,
        }),
      );
      functions.set(consumer.id, fn);
    }
    this.functions = functions;
  }
}

/** Throws unless the queue's visibility timeout is longer than the consumer function may run. */
export function assertVisibilityExceedsTimeout(consumer: QueueConsumer, visibilityTimeoutSeconds: number): void {
  if (visibilityTimeoutSeconds <= consumer.timeoutSeconds) {
    throw new Error(
      `Queue ${consumer.queue} has a visibility timeout of ${visibilityTimeoutSeconds} s, which must exceed the ` +
        `${consumer.timeoutSeconds} s timeout of its consumer ${consumer.id} (lib/routes.ts)`,
    );
  }
}

/** What an SQS event source accepts as maximum concurrency (the Lambda `ScalingConfig` limits). */
export const sqsMaxConcurrencyRange = { min: 2, max: 1000 } as const;

/** Throws unless the consumer's `maxConcurrency` is an integer an SQS event source accepts. */
export function assertMaxConcurrencyInRange(consumer: QueueConsumer): void {
  const { min, max } = sqsMaxConcurrencyRange;
  if (!Number.isInteger(consumer.maxConcurrency) || consumer.maxConcurrency < min || consumer.maxConcurrency > max) {
    throw new Error(
      `Consumer ${consumer.id} has maxConcurrency ${consumer.maxConcurrency}, but an SQS event source accepts an integer ` +
        `from ${min} to ${max} (lib/routes.ts)`,
    );
  }
}
