import { DeleteMessageCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { runtime } from './api';

/** A domain event as the service publishes it to the events queue (the webhook envelope). */
export interface QueuedEvent<P = Record<string, any>> {
  readonly type: string;
  readonly projectId: string;
  readonly payload: P;
  readonly createdAt: string;
}

let client: SQSClient | undefined;

function sqs(): SQSClient {
  client ??= new SQSClient({
    endpoint: runtime().env.AWS_ENDPOINT_URL_SQS,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
  });
  return client;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function parse(message: Message): QueuedEvent | undefined {
  try {
    const event = JSON.parse(message.Body ?? '') as QueuedEvent;
    return typeof event?.type === 'string' && typeof event.projectId === 'string' ? event : undefined;
  } catch {
    return undefined;
  }
}

export interface CollectOptions {
  /** Stop once this many matching events were seen. @default 1 */
  readonly count?: number;
  /** Give up after this long and return what was found. @default 10_000 */
  readonly timeoutMs?: number;
  /** After `count` events were found, keep looking this long for unexpected extra ones. @default 0 */
  readonly settleMs?: number;
}

/**
 * Reads the shared events queue (and its dead-letter queue: other test files poll the same queue,
 * so an event may be redriven there before its test looks) until `count` events match `predicate`
 * or the time runs out. Receives use `VisibilityTimeout: 0`, so events of other tests stay visible
 * to them; only matched events are deleted. Events are deduplicated by SQS message id and returned
 * in the order they were published.
 */
export async function collectEvents(predicate: (event: QueuedEvent) => boolean, options: CollectOptions = {}): Promise<QueuedEvent[]> {
  const count = options.count ?? 1;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const queueUrls = [runtime().queueUrls.Events, runtime().queueUrls.EventsDeadLetter].filter((url): url is string => Boolean(url));
  const found = new Map<string, { event: QueuedEvent; sentAt: number }>();
  let settleUntil: number | undefined;

  while (Date.now() < (settleUntil ?? deadline)) {
    let received = 0;
    for (const QueueUrl of queueUrls) {
      const { Messages = [] } = await sqs().send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['SentTimestamp'],
        }),
      );
      received += Messages.length;
      for (const message of Messages) {
        const event = parse(message);
        if (!event || !message.MessageId || !predicate(event)) continue;
        if (!found.has(message.MessageId)) {
          found.set(message.MessageId, { event, sentAt: Number(message.Attributes?.SentTimestamp ?? 0) });
        }
        await sqs()
          .send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle }))
          .catch(() => undefined);
      }
    }
    if (found.size >= count && settleUntil === undefined) {
      settleUntil = Math.min(deadline, Date.now() + (options.settleMs ?? 0));
      if (!options.settleMs) break;
    }
    if (received === 0) await sleep(50);
  }
  return [...found.values()].sort((a, b) => a.sentAt - b.sentAt).map(({ event }) => event);
}

/** Events of one project, optionally of some types only. */
export const eventsOf =
  (projectId: string, ...types: string[]) =>
  (event: QueuedEvent) =>
    event.projectId === projectId && (types.length === 0 || types.includes(event.type));
