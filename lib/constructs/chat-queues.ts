import { Duration } from 'aws-cdk-lib';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type QueueDefinition, queues } from '../routes.ts';

/** A queue of the wiring table with its dead-letter queue. */
export interface ChatQueue {
  readonly definition: QueueDefinition;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
}

/**
 * The queues of `lib/routes.ts` (`queues`), each with a dead-letter queue that receives a message
 * after `maxReceiveCount` failed receives. Both are encrypted with SQS-managed keys and refuse
 * requests that do not use TLS.
 */
export class ChatQueues extends Construct {
  /** Every queue of the wiring table, by id. */
  public readonly all: ReadonlyMap<string, ChatQueue>;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    const byId = new Map<string, ChatQueue>();
    for (const definition of queues) {
      const deadLetterQueue = new Queue(this, `${definition.id}DeadLetterQueue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // The maximum, so a poisoned message can still be inspected and redriven after a long weekend.
        retentionPeriod: Duration.days(14),
      });
      const queue = new Queue(this, `${definition.id}Queue`, {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
      });
      byId.set(definition.id, { definition, queue, deadLetterQueue });
    }
    this.all = byId;
  }

  /** The queue with the given id; throws for an id missing from `lib/routes.ts`. */
  public get(id: string): ChatQueue {
    const found = this.all.get(id);
    if (!found) throw new Error(`No queue with id ${id} in lib/routes.ts`);
    return found;
  }
}
