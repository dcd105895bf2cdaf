import { Duration, Validations } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueDefinition } from '#wiring';

/** A queue with its dead-letter queue. */
export interface ChatQueue {
  readonly id: string;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly maxReceiveCount: number;
  readonly visibilityTimeoutSeconds: number;
}

/**
 * A queue and its dead-letter queue, which receives a message after `maxReceiveCount` failed
 * receives. Both are encrypted with SQS-managed keys (which SNS may deliver to) and refuse requests
 * without TLS. Used for the shared queues and for each event subscriber's queue.
 */
export function queueWithDeadLetter(
  scope: Construct,
  id: string,
  options: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
): ChatQueue {
  const deadLetterQueue = new Queue(scope, `${id}DeadLetterQueue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // The maximum, so a poisoned message can still be inspected and redriven after a long weekend.
    retentionPeriod: Duration.days(14),
  });
  const queue = new Queue(scope, `${id}Queue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: Duration.seconds(options.visibilityTimeoutSeconds),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: options.maxReceiveCount },
  });
  return { id, queue, deadLetterQueue, ...options };
}

/** A stream consumer's on-failure destination: read by people, not functions. */
export interface StreamFailureQueue {
  readonly id: string;
  readonly queue: Queue;
}

/**
 * The on-failure destination of a table stream consumer: Lambda leaves there the coordinates
 * (shard, sequence numbers) of a batch that still failed after its retries (`streamRetryPolicy`),
 * so someone can republish them from the table. Nothing consumes it, so it has no dead-letter
 * queue; it keeps messages for the 14-day maximum, and an alarm fires whenever new ones arrive.
 */
export function streamFailureQueue(scope: Construct, consumerId: string): StreamFailureQueue {
  const id = `${consumerId}Failures`;
  const queue = new Queue(scope, `${id}Queue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'An on-failure destination that no function consumes: messages move to a dead-letter queue only after failed ' +
      'receives, which never happen here. It keeps its messages 14 days and alarms when new ones arrive.',
  });
  return { id, queue };
}

/** The queues shared between areas (`queues` of `functions/wiring/`), in the root stack. */
export class ChatQueues extends Construct {
  /** Every shared queue, by id. */
  public readonly all: ReadonlyMap<string, ChatQueue>;

  constructor(scope: Construct, id: string, props: { readonly definitions: readonly QueueDefinition[] }) {
    super(scope, id);
    this.all = new Map(props.definitions.map((definition) => [definition.id, queueWithDeadLetter(this, definition.id, definition)]));
  }

  /** The queue with the given id; throws for an id missing from `functions/wiring/`. */
  public get(id: string): ChatQueue {
    const found = this.all.get(id);
    if (!found) throw new Error(`No shared queue with id ${id} in functions/wiring/`);
    return found;
  }
}
