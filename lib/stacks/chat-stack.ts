import { Annotations, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { type Area, httpRoute, ORIGIN_VERIFY_BINDING, areas as wiredAreas, queues as wiredQueues } from '#wiring';
import { tableSchema } from '#wiring/table';
import { ChatApis, throttleHttpRoutes } from '../constructs/chat-apis.ts';
import { ChatAttachments } from '../constructs/chat-attachments.ts';
import { ChatEdge } from '../constructs/chat-edge.ts';
import { ChatEventTopic } from '../constructs/chat-event-topic.ts';
import type { ChatFunction } from '../constructs/chat-function.ts';
import { ChatLogSubscribers } from '../constructs/chat-log-subscribers.ts';
import { ChatAlarmTopic, ChatObservability } from '../constructs/chat-observability.ts';
import { ChatQueues } from '../constructs/chat-queues.ts';
import { ChatSecrets, secretOutputId } from '../constructs/chat-secrets.ts';
import { ChatTable } from '../constructs/chat-table.ts';
import { AreaStack, callsTheModel, type SharedResources } from './area-stack.ts';
import { bindingSettings, type ChatConfig, sharedEnvironment } from './chat-config.ts';

/** Properties of {@link ChatStack}. */
export interface ChatStackProps extends StackProps {
  /** Resolved settings (see `resolveChatConfig`). */
  readonly config: ChatConfig;
  /**
   * The areas to build, one nested stack each.
   * @default the areas of `functions/wiring/`
   */
  readonly areas?: readonly Area[];
}

/**
 * The root stack: what every area shares (the table and its stream, the secrets, the domain event
 * topic, the shared queues, the HTTP and WebSocket APIs with their stages, the alarm topic and the
 * dashboard), and one nested stack per area of the wiring table ({@link AreaStack}).
 *
 * Nested stacks rather than stacks of their own: `cdk deploy` stays one command and one
 * CloudFormation operation that rolls back as a whole; the root hands resources to areas as
 * nested-stack parameters, which, unlike cross-stack exports, never pin a value (an export cannot
 * change while another stack imports it); and each nested stack has its own 500-resource and 1 MB
 * limits, so the service grows an area at a time. Deploy order follows the references: the root's
 * shared resources, then the areas in parallel, then the stages (which wait for the routes) and the
 * dashboard (which reads the areas' functions).
 */
export class ChatStack extends Stack {
  public readonly storage: ChatTable;
  public readonly secrets: ChatSecrets;
  public readonly events: ChatEventTopic;
  public readonly async: ChatQueues;
  public readonly api: ChatApis;
  public readonly alarmTopic: ChatAlarmTopic;
  /** The attachments bucket; `undefined` when the deployment turns attachments off (`attachmentsEnabled=false`). */
  public readonly attachments: ChatAttachments | undefined;
  public readonly areas: ReadonlyMap<string, AreaStack>;
  public readonly observability: ChatObservability;
  /** The CloudFront distribution in front of everything; `undefined` with `edge=false`. */
  public readonly edge: ChatEdge | undefined;
  /** The log subscribers of the wiring table, which every area's log groups send to. */
  public readonly logSubscribers: ChatLogSubscribers;
  /** Every function of every area (and every log subscriber), by its wiring-table id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;

  constructor(scope: Construct, id: string, props: ChatStackProps) {
    super(scope, id, props);
    const { config } = props;

    this.storage = new ChatTable(this, 'Storage', { deletionProtection: config.tableDeletionProtection });
    this.secrets = new ChatSecrets(this, 'Secrets', {
      stage: config.stage,
      removalPolicy: config.removalPolicy,
      without: config.edge ? [] : ['origin-verify'],
    });
    this.events = new ChatEventTopic(this, 'EventTopic', { stage: config.stage, keyRemovalPolicy: config.removalPolicy });
    this.async = new ChatQueues(this, 'Async', { definitions: wiredQueues });
    this.api = new ChatApis(this, 'Api', { config });
    this.alarmTopic = new ChatAlarmTopic(this, 'Alarms', {
      stage: config.stage,
      alarmEmail: config.alarmEmail,
      keyRemovalPolicy: config.removalPolicy,
    });

    this.attachments = config.attachmentsEnabled ? new ChatAttachments(this, 'AttachmentStore') : undefined;

    const shared: SharedResources = {
      table: this.storage.table,
      indexNames: tableSchema.globalSecondaryIndexes.map((index) => index.indexName),
      queue: (queueId) => this.async.get(queueId).queue,
      sharedQueues: this.async.all,
      eventTopic: this.events.topic,
      secret: (secretId) => this.secrets.get(secretId),
      webSocketStage: this.api.webSocketStage,
      // The HTTP API serves its `$default` stage at its endpoint: links need no stage path.
      httpApiUrl: this.api.httpApi.apiEndpoint,
      httpApi: this.api.httpApi,
      webSocketApi: this.api.webSocketApi,
      alarmTopic: this.alarmTopic.topic,
      bucket: (bucketId) => (bucketId === 'attachments' ? this.attachments?.bucket : undefined),
    };
    // Log subscribers live here: every area's log groups send to them, and areas reference the root only.
    const builtAreas = props.areas ?? wiredAreas;
    this.logSubscribers = new ChatLogSubscribers(this, 'LogSubscribers', {
      subscribers: builtAreas.flatMap((area) => area.logSubscribers ?? []),
      resources: {
        ...shared,
        stateMachine: (machineId) => {
          throw new Error(`A log subscriber binds state machine ${machineId}: only an area's own functions may`);
        },
      },
      environment: sharedEnvironment(config),
      settings: bindingSettings(config),
      deployed: (bindings) => (config.edge ? bindings : bindings.filter((binding) => binding !== ORIGIN_VERIFY_BINDING)),
      logRemovalPolicy: config.removalPolicy,
    });
    const areaStacks = new Map<string, AreaStack>();
    const functions = new Map<string, ChatFunction>(this.logSubscribers.functions);
    for (const area of builtAreas) {
      const areaStack = new AreaStack(this, area.id, { area, shared, config, logSubscribers: this.logSubscribers });
      // CloudWatch Logs invokes the destination when a subscription filter is created: the permission comes first.
      for (const permission of this.logSubscribers.permissions) areaStack.nestedStackResource?.addDependency(permission);
      areaStacks.set(area.id, areaStack);
      for (const [functionId, fn] of areaStack.functions) {
        if (functions.has(functionId)) throw new Error(`Two functions have the id ${functionId} in functions/wiring/`);
        functions.set(functionId, fn);
      }
      // A stage deploys what its API has when it is created: after the area's routes, it starts complete
      // (and API Gateway refuses to deploy a WebSocket API without routes at all).
      if (area.webSocketRoutes?.length || area.frames?.some((frame) => frame.answer)) this.api.webSocketStage.node.addDependency(areaStack);
      if (area.httpRoutes?.some((route) => (route.transport ?? 'httpApi') === 'httpApi')) this.api.httpStage.node.addDependency(areaStack);
    }
    this.areas = areaStacks;
    this.functions = functions;

    // The AI routes hold a function for up to 29 s each: a route throttle bounds their concurrency
    // (rate × seconds per call + burst) without reserving any of a small account's pool.
    const aiRouteKeys = (props.areas ?? wiredAreas)
      .flatMap((area) => area.httpRoutes ?? [])
      .filter((route) => (route.transport ?? 'httpApi') === 'httpApi' && callsTheModel(route))
      .map((route) => `${route.method} ${route.path}`);
    throttleHttpRoutes(this.api.httpStage, aiRouteKeys, { rateLimit: config.aiThrottleRateLimit, burstLimit: config.aiThrottleBurstLimit });

    this.observability = new ChatObservability(this, 'Observability', {
      stage: config.stage,
      alarmTopic: this.alarmTopic.topic,
      httpStage: this.api.httpStage,
      webSocketStage: this.api.webSocketStage,
      table: this.storage.table,
      eventTopic: this.events.topic,
      queues: [...this.async.all.values()],
      areas: [...areaStacks.values()].map((areaStack) => ({
        id: areaStack.area.id,
        functions: areaStack.functions,
        stateMachines: new Map([...areaStack.workflows].map(([machineId, workflow]) => [machineId, workflow.stateMachine])),
        queues: areaStack.queues,
        failureQueues: areaStack.failureQueues,
        areaAlarm: areaStack.alarms.areaAlarm,
      })),
      http5xxAlarmPercent: config.http5xxAlarmPercent,
      httpLatencyP99AlarmMs: config.httpLatencyP99AlarmMs,
      accountConcurrencyAlarmThreshold: config.accountConcurrencyAlarmThreshold,
    });
    if (!config.alarmEmail) {
      Annotations.of(this).addWarningV2(
        'chat:alarms:noAlarmEmail',
        `No alarmEmail: every alarm notifies the topic "chat-${config.stage} alarms", which nobody is subscribed to. ` +
          'Deploy with -c alarmEmail=ops@example.com, or subscribe to the AlarmTopicArn output yourself.',
      );
    }

    const functionUrls = [...areaStacks.values()].flatMap((areaStack) => [...areaStack.functionUrls]);
    this.edge = config.edge
      ? new ChatEdge(this, 'Edge', {
          config,
          httpApi: this.api.httpApi,
          webSocketStage: this.api.webSocketStage,
          streamingRoutes: functionUrls.map(([routeId, url]) => ({ route: httpRoute(routeId), url })),
          originSecret: this.secrets.get('origin-verify'),
        })
      : undefined;

    if (this.edge) {
      new CfnOutput(this, 'BaseUrl', {
        value: this.edge.baseUrl,
        description: "The service's one address: REST, /ws/rooms/<roomId> (wss://), /rooms/<roomId>/stream, /embed.js",
      });
      new CfnOutput(this, 'DistributionDomainName', {
        value: this.edge.distribution.distributionDomainName,
        description: 'Where a custom domain points (CNAME or alias) when the stack does not own its zone',
      });
    }
    const direct = this.edge ? ' (operators: clients use BaseUrl; requests around CloudFront are refused)' : '';
    new CfnOutput(this, 'HttpApiUrl', { value: this.api.httpStage.url, description: `Base URL of the HTTP API${direct}` });
    new CfnOutput(this, 'WebSocketUrl', {
      value: this.api.webSocketStage.url,
      description: `wss:// URL of the WebSocket API, with ?roomId=${direct}`,
    });
    new CfnOutput(this, 'ConnectionsEndpoint', {
      value: this.api.webSocketStage.callbackUrl,
      description: 'https callback URL of the WebSocket stage (CONNECTIONS_ENDPOINT)',
    });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    if (this.attachments) new CfnOutput(this, 'AttachmentsBucketName', { value: this.attachments.bucket.bucketName });
    new CfnOutput(this, 'EventTopicArn', { value: this.events.topic.topicArn, description: 'Domain event fan-out (SNS)' });
    for (const [queueId, { queue, deadLetterQueue }] of this.async.all) {
      new CfnOutput(this, `${queueId}QueueUrl`, { value: queue.queueUrl });
      new CfnOutput(this, `${queueId}DeadLetterQueueUrl`, { value: deadLetterQueue.queueUrl });
    }
    for (const [routeId, functionUrl] of functionUrls) {
      new CfnOutput(this, sseUrlOutputId(routeId, functionUrls.length), {
        value: functionUrl.url,
        description: this.edge
          ? `Function URL (response streaming) serving ${routeId}, signed requests from CloudFront only; clients use BaseUrl`
          : `Function URL (response streaming) serving ${routeId}; clients append the route path (the SDK's sseUrl)`,
      });
    }
    for (const areaStack of areaStacks.values()) {
      for (const [machineId, workflow] of areaStack.workflows) {
        new CfnOutput(this, `${machineId}StateMachineArn`, { value: workflow.stateMachine.stateMachineArn });
      }
    }
    for (const [secretId, secret] of this.secrets.all) {
      new CfnOutput(this, secretOutputId(secretId), {
        value: secret.secretArn,
        description: `Secrets Manager secret ${secretId}${secretId === 'operator-key' ? ' (read it to call /platform routes)' : ''}`,
      });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topic.topicArn });
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
