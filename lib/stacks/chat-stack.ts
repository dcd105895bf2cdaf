import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ChatApis } from '../constructs/chat-apis.ts';
import { ChatObservability } from '../constructs/chat-observability.ts';
import { ChatQueues } from '../constructs/chat-queues.ts';
import { ChatTable } from '../constructs/chat-table.ts';
import type { ChatConfig } from './chat-config.ts';

/** Properties of {@link ChatStack}. */
export interface ChatStackProps extends StackProps {
  /** Resolved settings (see `resolveChatConfig`). */
  readonly config: ChatConfig;
}

/**
 * The whole service in one stack, one construct per area: `Storage` (the table), `Async` (queues),
 * `Api` (HTTP + WebSocket APIs and the route functions) and `Observability` (dashboard, alarms).
 *
 * One stack rather than four: the table is protected by deletion protection and `RETAIN` on its
 * own; there are no cross-stack exports that would pin the table or queues; and grants resolve to
 * logical ids of this template, so the cdk-nag acknowledgments name their findings exactly.
 */
export class ChatStack extends Stack {
  public readonly storage: ChatTable;
  public readonly async: ChatQueues;
  public readonly api: ChatApis;
  public readonly observability: ChatObservability;

  constructor(scope: Construct, id: string, props: ChatStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.storage = new ChatTable(this, 'Storage');
    this.async = new ChatQueues(this, 'Async');
    const events = this.async.get('Events');
    this.api = new ChatApis(this, 'Api', { table: this.storage.table, eventsQueue: events.queue, config });
    this.observability = new ChatObservability(this, 'Observability', {
      stage: config.stage,
      httpStage: this.api.httpStage,
      webSocketStage: this.api.webSocketStage,
      functions: this.api.functions,
      table: this.storage.table,
      queues: [...this.async.all.values()],
      http5xxAlarmPercent: config.http5xxAlarmPercent,
      alarmEmail: config.alarmEmail,
      keyRemovalPolicy: config.removalPolicy,
    });

    new CfnOutput(this, 'HttpApiUrl', { value: this.api.httpStage.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'WebSocketUrl', { value: this.api.webSocketStage.url, description: 'wss:// URL for clients' });
    new CfnOutput(this, 'ConnectionsEndpoint', {
      value: this.api.webSocketStage.callbackUrl,
      description: 'https callback URL of the WebSocket stage (CONNECTIONS_ENDPOINT)',
    });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    new CfnOutput(this, 'EventsQueueUrl', { value: events.queue.queueUrl });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', { value: events.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.observability.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName });
  }
}
