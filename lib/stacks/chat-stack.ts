import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ChatApis } from '../constructs/chat-apis.ts';
import { ChatConsumers } from '../constructs/chat-consumers.ts';
import type { ChatFunction, ChatResources } from '../constructs/chat-function.ts';
import { ChatObservability } from '../constructs/chat-observability.ts';
import { ChatQueues } from '../constructs/chat-queues.ts';
import { ChatSecrets } from '../constructs/chat-secrets.ts';
import { ChatTable } from '../constructs/chat-table.ts';
import { ChatWorkflows } from '../constructs/chat-workflows.ts';
import type { ChatConfig } from './chat-config.ts';

/** Properties of {@link ChatStack}. */
export interface ChatStackProps extends StackProps {
  /** Resolved settings (see `resolveChatConfig`). */
  readonly config: ChatConfig;
}

/**
 * The whole service in one stack, one construct per area: `Storage` (the table), `Secrets` (the
 * webhook secret encryption key), `Async` (queues), `Workflows` (Step Functions state machines and
 * their task functions), `Api` (HTTP + WebSocket APIs, the route functions and the function URLs of
 * streaming routes), `Consumers` (queue consumer functions) and `Observability` (dashboard, alarms).
 *
 * Build order follows the grants: task functions before their state machine, the state machine
 * before the functions that start it (`webhooks:start`).
 *
 * One stack rather than four: the table is protected by deletion protection and `RETAIN` on its
 * own; there are no cross-stack exports that would pin the table or queues; and grants resolve to
 * logical ids of this template, so the cdk-nag acknowledgments name their findings exactly.
 */
export class ChatStack extends Stack {
  public readonly storage: ChatTable;
  public readonly secrets: ChatSecrets;
  public readonly async: ChatQueues;
  public readonly workflows: ChatWorkflows;
  public readonly api: ChatApis;
  public readonly consumers: ChatConsumers;
  public readonly observability: ChatObservability;
  /** Every function of the stack (routes, queue consumers, state machine tasks), by its wiring-table id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;

  constructor(scope: Construct, id: string, props: ChatStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.storage = new ChatTable(this, 'Storage');
    this.secrets = new ChatSecrets(this, 'Secrets', { stage: config.stage });
    this.async = new ChatQueues(this, 'Async');
    const shared: ChatResources = {
      table: this.storage.table,
      eventsQueue: this.async.get('Events').queue,
      realtimeQueue: this.async.get('Realtime').queue,
      webhookSecretEncryptionKey: this.secrets.webhookSecretEncryptionKey,
    };
    this.workflows = new ChatWorkflows(this, 'Workflows', { resources: shared, config });
    const webhookRetry = this.workflows.get('WebhookRetry');
    this.api = new ChatApis(this, 'Api', { resources: { ...shared, webhookStateMachine: webhookRetry.stateMachine }, config });
    this.consumers = new ChatConsumers(this, 'Consumers', {
      queues: this.async,
      resources: { ...shared, webhookStateMachine: webhookRetry.stateMachine, webSocketStage: this.api.webSocketStage },
      config,
    });

    const functions = new Map<string, ChatFunction>();
    for (const group of [this.api.functions, this.consumers.functions, this.workflows.functions]) {
      for (const [functionId, fn] of group) {
        if (functions.has(functionId)) throw new Error(`Two functions have the id ${functionId} in lib/routes.ts`);
        functions.set(functionId, fn);
      }
    }
    this.functions = functions;

    this.observability = new ChatObservability(this, 'Observability', {
      stage: config.stage,
      httpStage: this.api.httpStage,
      webSocketStage: this.api.webSocketStage,
      functions,
      stateMachines: new Map([...this.workflows.all].map(([machineId, workflow]) => [machineId, workflow.stateMachine])),
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
    for (const [queueId, { queue, deadLetterQueue }] of this.async.all) {
      new CfnOutput(this, `${queueId}QueueUrl`, { value: queue.queueUrl });
      new CfnOutput(this, `${queueId}DeadLetterQueueUrl`, { value: deadLetterQueue.queueUrl });
    }
    for (const [routeId, functionUrl] of this.api.functionUrls) {
      new CfnOutput(this, sseUrlOutputId(routeId, this.api.functionUrls.size), {
        value: functionUrl.url,
        description: `Function URL (response streaming) serving ${routeId}; clients append the route path (the SDK's sseUrl)`,
      });
    }
    for (const [machineId, workflow] of this.workflows.all) {
      new CfnOutput(this, `${machineId}StateMachineArn`, { value: workflow.stateMachine.stateMachineArn });
    }
    new CfnOutput(this, 'WebhookSecretEncryptionKeySecretArn', {
      value: this.secrets.webhookSecretEncryptionKey.secretArn,
      description: 'Secrets Manager secret holding WEBHOOK_SECRET_ENCRYPTION_KEY (retained on stack deletion)',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.observability.alarmTopic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.observability.dashboard.dashboardName });
  }
}

/**
 * Id of the stack output carrying a streaming route's function URL: `SseUrl` while the wiring table
 * has one `functionUrl` route (the name the SDK and docs/api.md use), `<RouteId>SseUrl` for each
 * once it has several.
 */
export function sseUrlOutputId(routeId: string, streamingRouteCount: number): string {
  return streamingRouteCount === 1 ? 'SseUrl' : `${routeId}SseUrl`;
}
