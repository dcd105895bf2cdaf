import type { RemovalPolicy } from 'aws-cdk-lib';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** Properties of {@link ChatEventTopic}. */
export interface ChatEventTopicProps {
  readonly stage: string;
  /** What happens to the topic's KMS key when it leaves the stack. */
  readonly keyRemovalPolicy: RemovalPolicy;
}

/**
 * The domain event fan-out: the event publisher (the table stream's consumer) publishes each event
 * once, and every subscriber's queue receives the types its filter policy names. SNS rather than
 * EventBridge: a filter policy per subscription is all the routing the service needs, delivery to
 * SQS takes tens of milliseconds rather than EventBridge's hundreds, a publish costs half an
 * EventBridge event, PublishBatch sends ten at once, and the local stand-in (fauxqs) speaks it.
 *
 * Encrypted with a customer-managed key (the publisher's grant includes using it) and closed to
 * publishers without TLS.
 */
export class ChatEventTopic extends Construct {
  public readonly topic: Topic;

  constructor(scope: Construct, id: string, props: ChatEventTopicProps) {
    super(scope, id);
    const key = new Key(this, 'Key', {
      description: `Encrypts the chat-${props.stage} domain event topic`,
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy,
    });
    this.topic = new Topic(this, 'Topic', {
      displayName: `chat-${props.stage} domain events`,
      masterKey: key,
      enforceSSL: true,
    });
  }
}
