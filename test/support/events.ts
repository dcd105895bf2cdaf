import { SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { inject } from 'vitest';

const runtime = () => inject('runtime');

/** A domain event as the service publishes it to the event topic: the webhook envelope and its id. */
export interface QueuedEvent<P = Record<string, any>> {
  readonly id: string;
  readonly type: string;
  readonly projectId: string;
  readonly payload: P;
  readonly createdAt: string;
}

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let sqsClient: SQSClient | undefined;
let snsClient: SNSClient | undefined;
/** The runtime's SQS stand-in, one client for the test process (the taps', and tests' that look at a service queue). */
export const sqs = () => {
  sqsClient ??= new SQSClient({
    endpoint: runtime().env.AWS_ENDPOINT_URL_SQS,
    region: 'us-east-1',
    credentials,
    useQueueUrlAsEndpoint: false,
  });
  return sqsClient;
};
const sns = () => {
  // Straight to the stand-in, not through the fan-out switch tests may turn off.
  snsClient ??= new SNSClient({ endpoint: runtime().env.AWS_ENDPOINT_URL_SQS, region: 'us-east-1', credentials });
  return snsClient;
};

const taps = new Map<string, Promise<string>>();

/**
 * Subscribes a queue of the test's own to the event topic, filtered on the project as a subscriber
 * would filter on types: the tests see exactly what a subscriber of that project receives, and
 * never take events from the service's own subscribers. Made when the project is created, before
 * any of its events can be published.
 */
export function openEventTap(projectId: string): Promise<string> {
  let tap = taps.get(projectId);
  if (!tap) {
    tap = (async () => {
      const { QueueUrl } = await sqs().send(new CreateQueueCommand({ QueueName: `tap-${projectId}` }));
      const { Attributes } = await sqs().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      await sns().send(
        new SubscribeCommand({
          TopicArn: runtime().eventTopicArn,
          Protocol: 'sqs',
          Endpoint: Attributes?.QueueArn,
          Attributes: { RawMessageDelivery: 'true', FilterPolicy: JSON.stringify({ projectId: [projectId] }) },
        }),
      );
      return QueueUrl as string;
    })();
    taps.set(projectId, tap);
  }
  return tap;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Which events of a project a test waits for. */
export interface EventSelection {
  readonly projectId: string;
  readonly types: readonly string[];
}

/**
 * Every membership announces itself (`room.member_joined` for each member of a new room, ...), so
 * a selection without types means every event but those: tests of membership events name them.
 */
export const MEMBERSHIP_EVENT_TYPES: readonly string[] = ['room.member_joined', 'room.member_left'];

/** Events of one project, optionally of some types only. */
export const eventsOf = (projectId: string, ...types: string[]): EventSelection => ({ projectId, types });

export interface CollectOptions {
  /** Stop once this many matching events were seen. @default 1 */
  readonly count?: number;
  /** Give up after this long and return what was found. @default 10_000 */
  readonly timeoutMs?: number;
  /** After `count` events were found, keep looking this long for unexpected extra ones. @default 0 */
  readonly settleMs?: number;
}

/**
 * Reads the project's tap until `count` events of the selected types arrived or the time runs out,
 * and returns them in the order the topic delivered them. Events are counted by delivery: one
 * published twice is returned twice, so tests can assert that nothing repeats.
 */
export async function collectEvents(selection: EventSelection, options: CollectOptions = {}): Promise<QueuedEvent[]> {
  const count = options.count ?? 1;
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const queueUrl = await openEventTap(selection.projectId);
  const found: { event: QueuedEvent; sentAt: number }[] = [];
  let settleUntil: number | undefined;

  while (Date.now() < (settleUntil ?? deadline)) {
    const { Messages = [] } = await sqs().send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        // Events of other types stay for a later call of the same test.
        VisibilityTimeout: 0,
        WaitTimeSeconds: 0,
        MessageSystemAttributeNames: ['SentTimestamp'],
      }),
    );
    const unselectedMemberships: typeof Messages = [];
    const matched = Messages.filter((message) => {
      const event = JSON.parse(message.Body ?? '{}') as QueuedEvent;
      if (selection.types.length === 0 && MEMBERSHIP_EVENT_TYPES.includes(event.type)) {
        unselectedMemberships.push(message);
        return false;
      }
      if (selection.types.length > 0 && !selection.types.includes(event.type)) return false;
      found.push({ event, sentAt: Number(message.Attributes?.SentTimestamp ?? 0) });
      return true;
    });
    // Membership events a selection of every type passes over are dropped, not left to crowd the tap.
    const taken = [...matched, ...unselectedMemberships];
    if (taken.length > 0) {
      await sqs().send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: taken.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
        }),
      );
    }
    if (found.length >= count && settleUntil === undefined) {
      settleUntil = Math.min(deadline, Date.now() + (options.settleMs ?? 0));
      if (!options.settleMs) break;
    }
    if (matched.length === 0) await sleep(50);
  }
  return found.sort((a, b) => a.sentAt - b.sentAt).map(({ event }) => event);
}
