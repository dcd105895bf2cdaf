import { type CfnSubscription, type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { EventSubscriber } from '#wiring';
import { filterPolicyOf } from '../event-subscriptions.ts';
import { addSqsConsumer } from './chat-consumers.ts';
import type { ChatFunction } from './chat-function.ts';
import { type ChatQueue, queueWithDeadLetter } from './chat-queues.ts';

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
  const subscription = topicHere.addSubscription(new SqsSubscription(queue.queue, { rawMessageDelivery: true }));
  // Written on the resource: the L2's filter policy has no `$or` (filterPolicyOf's, shared with the local stand-in).
  const policy = filterPolicyOf(subscriber);
  if (policy) (subscription.node.defaultChild as CfnSubscription).filterPolicy = policy;
  addSqsConsumer(fn, queue.queue, subscriber, subscriber.visibilityTimeoutSeconds);
  return queue;
}
