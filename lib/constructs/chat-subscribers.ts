import { type ITopic, SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { EventSubscriber } from '#wiring';
import { EVENT_TYPE_ATTRIBUTE } from '../../functions/shared/events.ts';
import { addSqsConsumer } from './chat-consumers.ts';
import type { ChatFunction } from './chat-function.ts';
import { type ChatQueue, queueWithDeadLetter } from './chat-queues.ts';

/** The subscription's filter policy: the event types, and the attribute conditions the subscriber adds. */
function filterPolicyOf(subscriber: EventSubscriber): Record<string, SubscriptionFilter> | undefined {
  const policy: Record<string, SubscriptionFilter> = {};
  if (subscriber.eventTypes !== 'all')
    policy[EVENT_TYPE_ATTRIBUTE] = SubscriptionFilter.stringFilter({ allowlist: [...subscriber.eventTypes] });
  for (const [attribute, allowlist] of Object.entries(subscriber.attributeFilter ?? {})) {
    policy[attribute] = SubscriptionFilter.stringFilter({ allowlist: [...allowlist] });
  }
  return Object.keys(policy).length > 0 ? policy : undefined;
}

/**
 * An event subscriber of `functions/wiring/`: its own queue and dead-letter queue in `scope` (the
 * subscriber's area), subscribed to the event topic with raw delivery (the queue holds the event
 * envelope itself) and a filter policy on the event type, read by `fn` with partial batch failures.
 * Subscribers never share a queue, so one that fails an event retries only its own work.
 */
export function addEventSubscriber(scope: Construct, topic: ITopic, subscriber: EventSubscriber, fn: ChatFunction): ChatQueue {
  const queue = queueWithDeadLetter(scope, subscriber.id, subscriber);
  // Subscribed through a reference made in the area's own stack: given the root's Topic itself, the
  // L2 would make the area depend on its parent stack, which nested stacks cannot.
  const topicHere = Topic.fromTopicArn(scope, `${subscriber.id}EventTopic`, topic.topicArn);
  topicHere.addSubscription(
    new SqsSubscription(queue.queue, {
      rawMessageDelivery: true,
      filterPolicy: filterPolicyOf(subscriber),
    }),
  );
  addSqsConsumer(fn, queue.queue, subscriber, subscriber.visibilityTimeoutSeconds);
  return queue;
}
