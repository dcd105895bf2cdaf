import { expect } from 'vitest';
import {
  areas,
  eventSubscribers,
  type FunctionEntry,
  functionEntries,
  httpRoutes,
  queueConsumers,
  queues,
  schedules,
  webSocketRoutes,
} from '#wiring';
import { bindingVariable, bucketActions, outboundHosts, parseBinding, tableActions } from '#wiring/bindings';
import { tableSchema } from '#wiring/table';
import { streamingRouteTimeout, webSocketStageName } from '../../../lib/constructs/chat-apis.ts';
import { defaultServiceName } from '../../../lib/constructs/chat-function.ts';
import { type ChatConfig, resolveChatConfig } from '../../../lib/stacks/chat-config.ts';
import { SHARED_SYNTH_CONTEXT } from './synthesized.ts';

/**
 * What the wiring table says the synthesized templates hold, in the rendered terms of
 * `synthesized.ts` (`<table>.Arn`, `<Realtime queue>`): each function's grants and environment, and
 * the routes, frames, consumers and timeouts the chat-stack suite iterates.
 */

export const connectionsArn = `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<WebSocket API>/${webSocketStageName}/*/@connections/*`;
export const httpApiUrl = '<HTTP API>.ApiEndpoint';
export const callbackUrl = `https://<WebSocket API>.execute-api.<AWS::Region>.<AWS::URLSuffix>/${webSocketStageName}`;
export const sendActions = ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];
export const receiveActions = [
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
];
export const streamReadActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
export const on = (actions: readonly string[], ...targets: string[]) =>
  actions.flatMap((action) => targets.map((target) => `${action} on ${target}`));

/**
 * The least privilege each binding kind of `functions/wiring/bindings.ts` stands for, plus what every function
 * needs (its own log group, X-Ray) and what its event source needs.
 */
/** The configuration of the shared app (`synthesizedApp`): the defaults and its AI base URL. */
export const sharedSynthConfig = (): ChatConfig => resolveChatConfig({ providerUrls: SHARED_SYNTH_CONTEXT });

export function expectedGrants(entry: FunctionEntry, config: ChatConfig = sharedSynthConfig()): string[] {
  const grants = [
    ...on(['logs:CreateLogStream', 'logs:PutLogEvents'], `<${entry.id} log group>.Arn`),
    ...on(['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], '*'),
  ];
  const table = ['<table>.Arn', ...tableSchema.globalSecondaryIndexes.map((index) => `<table>.Arn/index/${index.indexName}`)];
  for (const binding of new Set(entry.bindings)) {
    const { kindId, parameter } = parseBinding(binding);
    switch (kindId) {
      case 'table':
        grants.push(...on(tableActions[parameter as 'read' | 'write'], ...table));
        break;
      case 'queue':
        grants.push(...on(sendActions, `<${parameter} queue>.Arn`));
        break;
      case 'events':
        grants.push(...on(['sns:Publish'], '<event topic>'), ...on(['kms:Decrypt', 'kms:GenerateDataKey*'], '<event topic key>.Arn'));
        break;
      case 'stateMachine':
        grants.push(...on(['states:StartExecution'], `<${parameter} state machine>`));
        break;
      case 'secret':
        grants.push(...on(['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], `<${parameter} secret>`));
        break;
      case 'connections':
        grants.push(...on(['execute-api:ManageConnections'], connectionsArn));
        break;
      case 'bucket': {
        const access = bucketActions[parameter.split(':')[1] as 'read' | 'write'];
        // Only with the bucket deployed; its objects, and listing on the bucket itself.
        if (config.attachmentsEnabled) {
          grants.push(...on(access.objects, '<attachments bucket>.Arn/*'), ...on(access.bucket, '<attachments bucket>.Arn'));
        }
        break;
      }
      case 'outbound':
      case 'link':
        // A base URL, no IAM.
        break;
      case 'email':
        // Only with a sender identity configured, and then on that identity alone.
        if (config.digestEmailFrom) {
          grants.push(
            ...on(
              ['ses:SendEmail'],
              `arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/${config.digestEmailIdentity ?? config.digestEmailFrom}`,
            ),
          );
        }
        break;
      default:
        kindId satisfies never;
    }
  }
  if (entry.kind === 'queueConsumer')
    grants.push(...on(receiveActions, `<${queueConsumers.find((c) => c.id === entry.id)?.queue} queue>.Arn`));
  if (entry.kind === 'eventSubscriber') grants.push(...on(receiveActions, `<${entry.id} queue>.Arn`));
  if (entry.kind === 'streamConsumer') {
    grants.push(...on(streamReadActions, '<table>.StreamArn'), ...on(sendActions, `<${entry.id}Failures queue>.Arn`));
  }
  return [...new Set(grants)].sort();
}

/** The environment a function gets: the shared settings and one variable per binding, rendered. */
export function expectedEnvironment(entry: FunctionEntry, config: ChatConfig = sharedSynthConfig()): Record<string, string> {
  const environment: Record<string, string> = {
    NODE_OPTIONS: '--enable-source-maps',
    POWERTOOLS_SERVICE_NAME: defaultServiceName,
    LOG_LEVEL: config.logLevel,
    RATE_LIMIT_MESSAGES_PER_MINUTE: String(config.rateLimitMessagesPerMinute),
    VAPID_SUBJECT: config.vapidSubject,
    PUSH_ENVIRONMENT: config.pushEnvironment,
    ...config.aiModels,
  };
  const schedule = schedules.find((candidate) => candidate.id === entry.id);
  if (entry.kind === 'schedule' && schedule?.switch) environment[schedule.switch] = String(config.dailyDigestEnabled);
  for (const binding of new Set(entry.bindings)) {
    const { kindId, parameter } = parseBinding(binding);
    const values = {
      table: '<table>',
      queue: `<${parameter} queue>`,
      events: '<event topic>',
      stateMachine: `<${parameter} state machine>`,
      secret: `<${parameter} secret>`,
      connections: callbackUrl,
      email: config.digestEmailFrom,
      link: httpApiUrl,
      bucket: config.attachmentsEnabled ? '<attachments bucket>' : undefined,
      outbound:
        kindId === 'outbound'
          ? (config.providerUrls[outboundHosts[parameter as keyof typeof outboundHosts].setting] ??
            outboundHosts[parameter as keyof typeof outboundHosts].default)
          : undefined,
    } satisfies Record<typeof kindId, string | undefined>;
    const value = values[kindId];
    if (value !== undefined) environment[bindingVariable(binding)] = value;
  }
  return environment;
}

export const streamingRoutes = httpRoutes.filter((route) => route.transport === 'functionUrl');
export const areaOfRoute = (routeId: string) => functionEntries.find((entry) => entry.id === routeId)?.area as string;
export const apiRouteCases = [
  ...httpRoutes
    .filter((route) => (route.transport ?? 'httpApi') === 'httpApi')
    .map((route) => ({ id: route.id, routeKey: `${route.method} ${route.path}`, api: 'HTTP API' as const, area: areaOfRoute(route.id) })),
  ...webSocketRoutes.map((route) => ({
    id: route.id,
    routeKey: route.routeKey,
    api: 'WebSocket API' as const,
    area: areaOfRoute(route.id),
  })),
];
/** Frames API Gateway answers itself, with the area whose stack holds their MOCK route. */
export const answeredFrames = areas.flatMap((area) =>
  (area.frames ?? []).filter((frame) => frame.answer).map((frame) => ({ frame, area: area.id })),
);
export const timeoutOf = (entry: FunctionEntry) =>
  streamingRoutes.some((route) => route.id === entry.id) ? streamingRouteTimeout.toSeconds() : (entry.timeoutSeconds ?? 10);

/** Evaluates the intrinsic functions a log group name uses, with the pseudo parameters given. */
export function evaluate(value: unknown, pseudo: Record<string, string>): string {
  if (typeof value === 'string') return value;
  const record = value as Record<string, any>;
  if (typeof record.Ref === 'string') {
    expect(pseudo[record.Ref], record.Ref).toBeDefined();
    return pseudo[record.Ref] as string;
  }
  if (record['Fn::Join']) return (record['Fn::Join'][1] as unknown[]).map((part) => evaluate(part, pseudo)).join(record['Fn::Join'][0]);
  if (record['Fn::Select']) {
    const [index, list] = record['Fn::Select'] as [number, unknown];
    const split = (list as { 'Fn::Split': [string, unknown] })['Fn::Split'];
    return evaluate(split[1], pseudo).split(split[0])[index] as string;
  }
  throw new Error(`Cannot evaluate ${JSON.stringify(value)}`);
}

export const sqsConsumerCases = [
  ...queueConsumers.map((consumer) => ({
    ...consumer,
    kind: 'queue consumer',
    queueName: `<${consumer.queue} queue>`,
    inArea: false,
    visibilityTimeoutSeconds: queues.find((queue) => queue.id === consumer.queue)?.visibilityTimeoutSeconds as number,
    maxReceiveCount: queues.find((queue) => queue.id === consumer.queue)?.maxReceiveCount as number,
  })),
  ...eventSubscribers.map((subscriber) => ({
    ...subscriber,
    kind: 'event subscriber',
    queueName: `<${subscriber.id} queue>`,
    inArea: true,
  })),
];
