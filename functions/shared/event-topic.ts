import { PublishBatchCommand, SNSClient } from '@aws-sdk/client-sns';
import { sdkClientDefaults } from '#shared/aws-clients';
import { bound } from '#shared/bindings';
import { type DomainEvent, EVENT_TYPE_ATTRIBUTE, type EventFilterAttribute } from '#shared/events';
import { TRACE_ID_ATTRIBUTE } from '#shared/request-context';
import { captureClient } from '#shared/tracer';

/** The endpoint comes from the SDK's resolution (`AWS_ENDPOINT_URL_SNS` for the local stand-in). */
export const sns = captureClient(new SNSClient({ maxAttempts: 3, ...sdkClientDefaults }));

/** SNS takes at most ten entries per PublishBatch. */
export const TOPIC_BATCH_ENTRIES = 10;
/** SNS caps a batch at 256 KiB in total; a little headroom for attributes. */
export const TOPIC_BATCH_BYTES = 240 * 1024;

export interface TopicEntry {
  readonly event: DomainEvent;
  /**
   * The filter attributes it carries (`EVENT_FILTER_ATTRIBUTES`, set by
   * `#domain/events/message-attributes`): the subscribers' filter policies match on them.
   */
  readonly attributes: Readonly<Partial<Record<EventFilterAttribute, string>>>;
  /** The event as it travels: the subscribers' queues receive this body. */
  readonly body: string;
  /** The trace id of the request that caused the event: a message attribute, which SQS subscribers receive too. */
  readonly traceId?: string;
}

/**
 * Publishes up to {@link TOPIC_BATCH_ENTRIES} events to the event topic in one PublishBatch, each
 * with the attributes the subscribers' filter policies match on. Answers the positions (in
 * `entries`) the topic refused; throws when the request itself failed.
 */
export async function publishToEventTopic(entries: readonly TopicEntry[]): Promise<number[]> {
  const result = await sns.send(
    new PublishBatchCommand({
      TopicArn: bound('events:publish'),
      PublishBatchRequestEntries: entries.map((entry, index) => ({
        Id: String(index),
        Message: entry.body,
        MessageAttributes: {
          [EVENT_TYPE_ATTRIBUTE]: { DataType: 'String', StringValue: entry.event.type },
          projectId: { DataType: 'String', StringValue: entry.event.projectId },
          ...(entry.traceId ? { [TRACE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: entry.traceId } } : {}),
          ...Object.fromEntries(
            Object.entries(entry.attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
          ),
        },
      })),
    }),
  );
  return (result.Failed ?? []).map((failure) => Number(failure.Id));
}
