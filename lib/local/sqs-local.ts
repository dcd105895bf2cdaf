import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import { type EventSubscriber, eventSubscribers, queues } from '#wiring';
import { filterPolicyOf, isSubscriberEnabled } from '../event-subscriptions';
import { type InProcessRequestHandler, inProcessRequestHandler } from './in-process-handler';

export interface SqsLocal {
  /** The SQS and SNS endpoint (fauxqs serves both). */
  readonly endpoint: string;
  /**
   * Queue URL by id: each shared queue (`Realtime`) and event subscriber (`WebhookDispatcher`), and
   * `<id>DeadLetter` for each one's dead-letter queue.
   */
  readonly queueUrls: Readonly<Record<string, string>>;
  /** The domain event topic the subscriber queues are subscribed to. */
  readonly eventTopicArn: string;
  /**
   * An SDK request handler that hands each SQS request to the stand-in in this process (Fastify's
   * `inject`): the SDK's own work runs, the loopback HTTP round trip does not.
   */
  readonly requestHandler: InProcessRequestHandler;
  stop(): Promise<void>;
}

/** The subscription's `FilterPolicy`, as CDK writes it on AWS (`lib/constructs/chat-subscribers.ts`). */
function filterPolicyAttributes(subscriber: EventSubscriber): { FilterPolicy?: string } {
  const policy = filterPolicyOf(subscriber);
  return policy ? { FilterPolicy: JSON.stringify(policy) } : {};
}

export const LOCAL_REGION = 'us-east-1';
const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The SQS and SNS stand-in: fauxqs in-process, speaking both protocols on loopback only. The
 * queues of the wiring table are created through the real clients as the CDK stacks create them:
 * each shared queue and each event subscriber's queue with its dead-letter queue and redrive
 * policy, and the subscriber queues subscribed to the event topic with raw delivery and the same
 * filter policy on the event type and attributes, but none for a subscriber whose feature the settings
 * leave off (`requiresSetting`). Contents live in memory: a restart drops undelivered jobs
 * (DynamoDB data, and so every event not yet published, is kept).
 */
export async function startSqsLocal(options: { readonly settings?: Readonly<Record<string, string | undefined>> } = {}): Promise<SqsLocal> {
  const app = buildApp({ logger: false, defaultRegion: LOCAL_REGION });
  const listening = await app.listen({ port: 0, host: '127.0.0.1' });
  const endpoint = new URL(listening).origin;
  const sqs = new SQSClient({ endpoint, region: LOCAL_REGION, credentials: localCredentials });
  const sns = new SNSClient({ endpoint, region: LOCAL_REGION, credentials: localCredentials });
  try {
    const queueUrls: Record<string, string> = {};
    const arnOf = async (queueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn as string;
    const createQueue = async (id: string, settings: { visibilityTimeoutSeconds: number; maxReceiveCount: number }) => {
      const name = `chat-${id.toLowerCase()}`;
      const deadLetter = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
      const created = await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: await arnOf(deadLetter.QueueUrl as string),
              maxReceiveCount: String(settings.maxReceiveCount),
            }),
          },
        }),
      );
      queueUrls[id] = created.QueueUrl as string;
      queueUrls[`${id}DeadLetter`] = deadLetter.QueueUrl as string;
      return created.QueueUrl as string;
    };
    for (const queue of queues) await createQueue(queue.id, queue);
    const { TopicArn: eventTopicArn } = await sns.send(new CreateTopicCommand({ Name: 'chat-events' }));
    // A subscriber whose feature is off gets no queue, as CDK creates none (lib/stacks/area-stack.ts).
    for (const subscriber of eventSubscribers.filter((candidate) => isSubscriberEnabled(candidate, options.settings ?? process.env))) {
      const queueUrl = await createQueue(subscriber.id, subscriber);
      await sns.send(
        new SubscribeCommand({
          TopicArn: eventTopicArn,
          Protocol: 'sqs',
          Endpoint: await arnOf(queueUrl),
          Attributes: {
            RawMessageDelivery: 'true',
            ...filterPolicyAttributes(subscriber),
          },
        }),
      );
    }
    const requestHandler = inProcessRequestHandler(async (request) => {
      const answer = await app.inject({
        method: request.method as 'POST',
        url: `${request.path}${request.search}`,
        headers: request.headers,
        payload: request.body,
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined) headers[name] = String(value);
      return { statusCode: answer.statusCode, headers, body: answer.rawPayload };
    });
    return { endpoint, queueUrls, eventTopicArn: eventTopicArn as string, requestHandler, stop: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  } finally {
    sqs.destroy();
    sns.destroy();
  }
}
