import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import { queues } from '../routes';

export interface SqsLocal {
  readonly endpoint: string;
  /** Queue URL by the queue's id in the wiring table (`Events`, and `EventsDeadLetter` for its DLQ). */
  readonly queueUrls: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export const LOCAL_REGION = 'us-east-1';

/**
 * The SQS stand-in: fauxqs in-process, speaking the SQS JSON protocol on loopback only. Every queue
 * of the wiring table is created through the real SQS client with its dead-letter queue and
 * redrive policy, as the CDK stack does. Queue contents live in memory: a restart drops undelivered
 * events (DynamoDB data is kept).
 */
export async function startSqsLocal(): Promise<SqsLocal> {
  const app = buildApp({ logger: false, defaultRegion: LOCAL_REGION });
  const listening = await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = new URL(listening).origin;
  const client = new SQSClient({ endpoint, region: LOCAL_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const queueUrls: Record<string, string> = {};
    for (const queue of queues) {
      const name = `chat-${queue.id.toLowerCase()}`;
      const deadLetter = await client.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
      const { Attributes } = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: deadLetter.QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      const created = await client.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: String(queue.maxReceiveCount) }),
          },
        }),
      );
      queueUrls[queue.id] = created.QueueUrl as string;
      queueUrls[`${queue.id}DeadLetter`] = deadLetter.QueueUrl as string;
    }
    return { endpoint, queueUrls, stop: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  } finally {
    client.destroy();
  }
}
