import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Area,
  areas,
  eventSubscribers,
  type FunctionEntry,
  functionEntries,
  functionsOf,
  httpRoutes,
  queueConsumers,
  queues,
  stateMachines,
  streamConsumers,
  webSocketRoutes,
} from '#wiring';
import {
  type Binding,
  bindingVariable,
  outboundHosts,
  parseBinding,
  type SecretId,
  secretDefinitions,
  tableActions,
  UNSET_SECRET_PLACEHOLDER,
} from '#wiring/bindings';
import { tableSchema } from '#wiring/table';
import { config as handlerConfig } from '../../functions/shared/config.ts';
import { EVENT_TYPE_ATTRIBUTE } from '../../functions/shared/events.ts';
import { corsAllowHeaders, streamCorsAllowHeaders, streamingRouteTimeout, webSocketStageName } from '../../lib/constructs/chat-apis.ts';
import {
  assertMaxConcurrencyInRange,
  assertVisibilityExceedsTimeout,
  sqsMaxConcurrencyRange,
} from '../../lib/constructs/chat-consumers.ts';
import { defaultServiceName, functionsDir, repoRoot } from '../../lib/constructs/chat-function.ts';
import { webhookDeliveryFailedMetricName } from '../../lib/constructs/chat-observability.ts';
import { loadDefinition } from '../../lib/local/step-functions.ts';
import type { AreaStack } from '../../lib/stacks/area-stack.ts';
import { type ChatAppOptions, createChatApp } from '../../lib/stacks/chat-app.ts';
import { type ChatConfig, resolveChatConfig } from '../../lib/stacks/chat-config.ts';
import { type ChatStack, sseUrlOutputId } from '../../lib/stacks/chat-stack.ts';

/**
 * Template assertions on the synthesized root stack and its nested area stacks. Bundling is skipped
 * (`aws:cdk:bundling-stacks: []`) to keep this file fast; `cdk-synth-cli.test.ts` bundles every
 * handler for real.
 *
 * A nested template names the root's resources through its Parameters (`referencetoChatdev...`),
 * whose values the root gives on the `AWS::CloudFormation::Stack` resource; the helpers below follow
 * them back, and render every reference as `<name>` (a `Ref`) or `<name>.Attribute` (a `Fn::GetAtt`),
 * the names coming from the stack outputs and the wiring table, so that a grant reads
 * `sqs:SendMessage on <Realtime queue>.Arn` whichever stack it is in.
 */

type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
type TemplateJson = {
  Parameters?: Record<string, unknown>;
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown }>;
};

/** One area's nested stack as the tests see it. */
interface AreaView {
  readonly area: Area;
  readonly stack: AreaStack;
  readonly template: Template;
  readonly resources: Record<string, Resource>;
  readonly outputs: Record<string, { Value: unknown }>;
  readonly parameters: readonly string[];
  /** Logical id of the area's `AWS::CloudFormation::Stack` in the root template. */
  readonly stackResourceId: string;
  /** What the root passes to each parameter. */
  readonly parameterValues: Record<string, unknown>;
  /** Root and area logical ids → names used by {@link render}. */
  readonly names: ReadonlyMap<string, string>;
}

interface Synthesized {
  readonly stack: ChatStack;
  readonly outdir: string;
  readonly root: Template;
  readonly rootResources: Record<string, Resource>;
  readonly outputs: Record<string, { Value: unknown }>;
  readonly rootNames: ReadonlyMap<string, string>;
  readonly views: ReadonlyMap<string, AreaView>;
}

/** An app as `cdk synth` builds it (feature flags from cdk.json), without bundling. */
function newApp(context: Record<string, unknown> = {}): App {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  return new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-infra-')),
    context: { ...cdkJson.context, ...context, 'aws:cdk:bundling-stacks': [] },
  });
}

const pascalCase = (id: string) => id.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
const secretIds = Object.keys(secretDefinitions) as SecretId[];

/** The logical ids a value refers to (`Ref` and `Fn::GetAtt`). */
function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.Ref === 'string') return [record.Ref];
    const getAtt = record['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
    return Object.values(record).flatMap(referencedIds);
  }
  return [];
}

/** Every `Fn::GetAtt` inside a value. */
function getAttsOf(value: unknown): Array<[string, string]> {
  if (Array.isArray(value)) return value.flatMap(getAttsOf);
  if (value && typeof value === 'object') {
    const getAtt = (value as Record<string, unknown>)['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return [getAtt as [string, string]];
    return Object.values(value).flatMap(getAttsOf);
  }
  return [];
}

/** The single logical id a `{ Ref }` or `{ Fn::GetAtt }` names. */
function idOf(value: unknown): string {
  const ids = referencedIds(value);
  expect(ids, JSON.stringify(value)).toHaveLength(1);
  return ids[0] as string;
}

/** `value` with every reference to one of the area's parameters replaced by what the root passes in. */
function inRoot(view: AreaView, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => inRoot(view, item));
  if (value && typeof value === 'object') {
    const ref = (value as { Ref?: unknown }).Ref;
    if (typeof ref === 'string' && ref in view.parameterValues) return view.parameterValues[ref];
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inRoot(view, item)]));
  }
  return value;
}

/** A template value as text: `<name>` for a `Ref`, `<name>.Attribute` for a `Fn::GetAtt`, joins joined. */
function renderWith(names: ReadonlyMap<string, string>, value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map((item) => renderWith(names, item)).join(', ')}]`;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    if (typeof record.Ref === 'string') return `<${names.get(record.Ref) ?? record.Ref}>`;
    const getAtt = record['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return `<${names.get(getAtt[0] as string) ?? getAtt[0]}>.${getAtt[1]}`;
    const join = record['Fn::Join'];
    if (Array.isArray(join)) return (join[1] as unknown[]).map((part) => renderWith(names, part)).join(join[0] as string);
  }
  return JSON.stringify(value);
}

/** A value of an area's template, rendered in root terms. */
const render = (view: AreaView, value: unknown) => renderWith(view.names, inRoot(view, value));

/** The function of a wiring-table entry: the logical id of its `ChatFunction` in its area's template. */
function functionIdIn(view: AreaView, functionId: string): string {
  const fn = view.stack.functions.get(functionId);
  expect(fn, `function ${functionId} of ${view.area.id}`).toBeDefined();
  return view.stack.getLogicalId(fn?.node.defaultChild as CfnElement);
}

/** Names of the root's shared resources, found through the stack outputs. */
function rootNamesOf(json: TemplateJson, root: Template): Map<string, string> {
  const outputs = json.Outputs ?? {};
  const output = (name: string) => idOf(outputs[name]?.Value);
  const names = new Map<string, string>([
    [output('TableName'), 'table'],
    [output('EventTopicArn'), 'event topic'],
    [idOf(json.Resources[output('EventTopicArn')]?.Properties.KmsMasterKeyId), 'event topic key'],
    [output('AlarmTopicArn'), 'alarm topic'],
    [output('DashboardName'), 'dashboard'],
  ]);
  for (const queue of queues) {
    names.set(output(`${queue.id}QueueUrl`), `${queue.id} queue`);
    names.set(output(`${queue.id}DeadLetterQueueUrl`), `${queue.id} dead-letter queue`);
  }
  for (const secretId of secretIds) names.set(output(`${pascalCase(secretId)}SecretArn`), `${secretId} secret`);
  for (const [protocol, name] of [
    ['HTTP', 'HTTP API'],
    ['WEBSOCKET', 'WebSocket API'],
  ] as const) {
    const apis = Object.keys(root.findResources('AWS::ApiGatewayV2::Api', { Properties: { ProtocolType: protocol } }));
    expect(apis, `${protocol} API`).toHaveLength(1);
    names.set(apis[0] as string, name);
  }
  return names;
}

/** Synthesizes the app as `cdk synth` would, without bundling, and reads the root and every area template. */
function synthesize(options: ChatAppOptions = {}, context: Record<string, unknown> = {}): Synthesized {
  const app = newApp(context);
  const { stack } = createChatApp(app, options);
  const root = Template.fromStack(stack);
  const rootJson = root.toJSON() as TemplateJson;
  const rootNames = rootNamesOf(rootJson, root);
  const views = new Map<string, AreaView>();
  for (const [areaId, areaStack] of stack.areas) {
    const template = Template.fromStack(areaStack);
    const json = template.toJSON() as TemplateJson;
    const stackResourceId = stack.getLogicalId(areaStack.nestedStackResource as CfnElement);
    const names = new Map(rootNames);
    const view: AreaView = {
      area: areaStack.area,
      stack: areaStack,
      template,
      resources: json.Resources,
      outputs: json.Outputs ?? {},
      parameters: Object.keys(json.Parameters ?? {}),
      stackResourceId,
      parameterValues: (rootJson.Resources[stackResourceId]?.Properties.Parameters ?? {}) as Record<string, unknown>,
      names,
    };
    for (const [functionId, fn] of areaStack.functions) {
      const logicalId = functionIdIn(view, functionId);
      names.set(logicalId, `${functionId} function`);
      names.set(idOf(json.Resources[logicalId]?.Properties.LoggingConfig.LogGroup), `${functionId} log group`);
      names.set(areaStack.getLogicalId(fn.executionRole.node.defaultChild as CfnElement), `${functionId} role`);
    }
    for (const queue of areaStack.queues) {
      names.set(areaStack.getLogicalId(queue.queue.node.defaultChild as CfnElement), `${queue.id} queue`);
      names.set(areaStack.getLogicalId(queue.deadLetterQueue.node.defaultChild as CfnElement), `${queue.id} dead-letter queue`);
    }
    for (const queue of areaStack.failureQueues) {
      names.set(areaStack.getLogicalId(queue.queue.node.defaultChild as CfnElement), `${queue.id} queue`);
    }
    for (const [machineId, workflow] of areaStack.workflows) {
      names.set(areaStack.getLogicalId(workflow.stateMachine.node.defaultChild as CfnElement), `${machineId} state machine`);
      names.set(areaStack.getLogicalId(workflow.logGroup.node.defaultChild as CfnElement), `${machineId} execution log group`);
    }
    views.set(areaId, view);
  }
  return {
    stack,
    outdir: app.outdir,
    root,
    rootResources: rootJson.Resources,
    outputs: rootJson.Outputs ?? {},
    rootNames,
    views,
  };
}

/** Every template file of a synthesized assembly (root and nested), as text. */
function templateFiles(outdir: string): Map<string, string> {
  return new Map(
    readdirSync(outdir)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => [file, readFileSync(path.join(outdir, file), 'utf8')]),
  );
}

let main: Synthesized;

const viewOf = (areaId: string, synth: Synthesized = main): AreaView => {
  const view = synth.views.get(areaId);
  expect(view, `nested stack of area ${areaId}`).toBeDefined();
  return view as AreaView;
};
const viewOfFunction = (entry: FunctionEntry) => viewOf(entry.area);
const functionOf = (entry: FunctionEntry) => functionIdIn(viewOfFunction(entry), entry.id);
const entryOf = (functionId: string) => functionEntries.find((entry) => entry.id === functionId) as FunctionEntry;

/** Every area view with its resources of `type`. */
function resourcesOfType(type: string, synth: Synthesized = main): Array<{ view: AreaView; id: string; resource: Resource }> {
  return [...synth.views.values()].flatMap((view) =>
    Object.entries(view.resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id, resource]) => ({ view, id, resource })),
  );
}

/** The IAM statements of a role of an area, as `<action> on <resource>` (inline policies and attached `AWS::IAM::Policy`s). */
function grantsOfRole(view: AreaView, roleId: string): string[] {
  const role = view.resources[roleId] as Resource;
  const documents = [
    ...((role.Properties.Policies ?? []) as Array<{ PolicyDocument: unknown }>).map((policy) => policy.PolicyDocument),
    ...Object.values(view.resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy' && referencedIds(resource.Properties.Roles).includes(roleId))
      .map((policy) => policy.Properties.PolicyDocument),
  ] as Array<{ Statement: Array<{ Effect: string; Action: string | string[]; Resource: unknown }> }>;
  return documents
    .flatMap((document) => document.Statement)
    .flatMap((statement) => {
      expect(statement.Effect).toBe('Allow');
      return [statement.Action]
        .flat()
        .flatMap((action) => [statement.Resource].flat().map((resource) => `${action} on ${render(view, resource)}`));
    })
    .sort();
}

const roleOfFunction = (view: AreaView, functionLogicalId: string) => idOf(view.resources[functionLogicalId]?.Properties.Role);
const grantsOf = (entry: FunctionEntry) => grantsOfRole(viewOfFunction(entry), roleOfFunction(viewOfFunction(entry), functionOf(entry)));

/** Every function of every area whose role may perform `action`, by wiring-table id. */
function functionsAllowedTo(action: string, synth: Synthesized = main): Map<string, string[]> {
  const allowed = new Map<string, string[]>();
  for (const { view, id } of resourcesOfType('AWS::Lambda::Function', synth)) {
    const grants = grantsOfRole(view, roleOfFunction(view, id)).filter((grant) => grant.startsWith(`${action} on `));
    if (grants.length > 0) allowed.set((view.names.get(id) as string).replace(/ function$/, ''), grants);
  }
  return allowed;
}

const connectionsArn = `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<WebSocket API>/${webSocketStageName}/*/@connections/*`;
const callbackUrl = `https://<WebSocket API>.execute-api.<AWS::Region>.<AWS::URLSuffix>/${webSocketStageName}`;
const sendActions = ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];
const receiveActions = [
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
];
const streamReadActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
const on = (actions: readonly string[], ...targets: string[]) =>
  actions.flatMap((action) => targets.map((target) => `${action} on ${target}`));

/**
 * The least privilege each binding kind of `functions/wiring/bindings.ts` stands for, plus what every function
 * needs (its own log group, X-Ray) and what its event source needs.
 */
function expectedGrants(entry: FunctionEntry): string[] {
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
      case 'outbound':
        // A base URL, no IAM.
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
function expectedEnvironment(entry: FunctionEntry, config: ChatConfig = resolveChatConfig()): Record<string, string> {
  const environment: Record<string, string> = {
    NODE_OPTIONS: '--enable-source-maps',
    POWERTOOLS_SERVICE_NAME: defaultServiceName,
    LOG_LEVEL: config.logLevel,
    RATE_LIMIT_MESSAGES_PER_MINUTE: String(config.rateLimitMessagesPerMinute),
    VAPID_SUBJECT: config.vapidSubject,
    PUSH_ENVIRONMENT: config.pushEnvironment,
    ...config.aiModels,
  };
  for (const binding of new Set(entry.bindings)) {
    const { kindId, parameter } = parseBinding(binding);
    const values = {
      table: '<table>',
      queue: `<${parameter} queue>`,
      events: '<event topic>',
      stateMachine: `<${parameter} state machine>`,
      secret: `<${parameter} secret>`,
      connections: callbackUrl,
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

/** A function's environment, rendered. */
function environmentOf(view: AreaView, functionLogicalId: string): Record<string, string> {
  const variables = (view.resources[functionLogicalId]?.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, render(view, value)]));
}

/** The function an API route of an area invokes, followed through route → integration → function. */
function functionOfRoute(view: AreaView, routeKey: string, api: 'HTTP API' | 'WebSocket API'): string {
  const routes = Object.entries(view.resources).filter(
    ([, resource]) =>
      resource.Type === 'AWS::ApiGatewayV2::Route' &&
      resource.Properties.RouteKey === routeKey &&
      render(view, resource.Properties.ApiId) === `<${api}>`,
  );
  expect(routes, `${api} route ${routeKey} in ${view.area.id}`).toHaveLength(1);
  const [, route] = routes[0] as [string, Resource];
  expect(render(view, route.Properties.Target)).toMatch(/^integrations\/<.+>$/);
  const integration = view.resources[idOf(route.Properties.Target)] as Resource;
  expect(integration).toMatchObject({ Type: 'AWS::ApiGatewayV2::Integration', Properties: { IntegrationType: 'AWS_PROXY' } });
  expect(render(view, integration.Properties.ApiId)).toBe(`<${api}>`);
  const targets = referencedIds(integration.Properties.IntegrationUri).filter((id) => view.resources[id]?.Type === 'AWS::Lambda::Function');
  expect(targets, `function of ${routeKey}`).toHaveLength(1);
  return targets[0] as string;
}

/** The function URL of a `functionUrl` route. */
function urlOfRoute(view: AreaView, routeId: string): string {
  const functionId = functionIdIn(view, routeId);
  const urls = Object.entries(view.resources).filter(
    ([, resource]) => resource.Type === 'AWS::Lambda::Url' && idOf(resource.Properties.TargetFunctionArn) === functionId,
  );
  expect(urls, `function URL of ${routeId}`).toHaveLength(1);
  return (urls[0] as [string, Resource])[0];
}

/** The area-template value a root output carries from a nested stack (`Fn::GetAtt: [<nested stack>, Outputs.X]`). */
function nestedOutput(value: unknown, synth: Synthesized = main): { view: AreaView; value: unknown } {
  const [stackResourceId, attribute] = (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
  const view = [...synth.views.values()].find((candidate) => candidate.stackResourceId === stackResourceId);
  expect(view, `nested stack ${stackResourceId}`).toBeDefined();
  expect(attribute).toMatch(/^Outputs\./);
  const output = (view as AreaView).outputs[attribute.slice('Outputs.'.length)];
  expect(output, attribute).toBeDefined();
  return { view: view as AreaView, value: output?.Value };
}

/** The area and logical id of a state machine of the wiring table, through the root output `<id>StateMachineArn`. */
function stateMachineOf(machineId: string): { view: AreaView; id: string } {
  const { view, value } = nestedOutput(main.outputs[`${machineId}StateMachineArn`]?.Value);
  const id = idOf(value);
  expect(view.resources[id]?.Type, `state machine ${machineId}`).toBe('AWS::StepFunctions::StateMachine');
  return { view, id };
}

/** The event source mapping feeding a function. */
function mappingOf(view: AreaView, functionLogicalId: string): Record<string, any> {
  const mappings = Object.values(view.resources).filter(
    (resource) => resource.Type === 'AWS::Lambda::EventSourceMapping' && idOf(resource.Properties.FunctionName) === functionLogicalId,
  );
  expect(mappings, `event source mapping of ${view.names.get(functionLogicalId)}`).toHaveLength(1);
  return (mappings[0] as Resource).Properties;
}

/** A queue's properties, by its rendered name (`<Realtime queue>`) in the root or an area. */
function queueNamed(name: string, view?: AreaView): Record<string, any> {
  const entries = view ? Object.entries(view.resources) : Object.entries(main.rootResources);
  const names = view ? view.names : main.rootNames;
  const found = entries.filter(([id, resource]) => resource.Type === 'AWS::SQS::Queue' && `<${names.get(id)}>` === name);
  expect(found, name).toHaveLength(1);
  return (found[0] as [string, Resource])[1].Properties;
}

const streamingRoutes = httpRoutes.filter((route) => route.transport === 'functionUrl');
const areaOfRoute = (routeId: string) => functionEntries.find((entry) => entry.id === routeId)?.area as string;
const apiRouteCases = [
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
const answeredFrames = areas.flatMap((area) =>
  (area.frames ?? []).filter((frame) => frame.answer).map((frame) => ({ frame, area: area.id })),
);
const timeoutOf = (entry: FunctionEntry) =>
  streamingRoutes.some((route) => route.id === entry.id) ? streamingRouteTimeout.toSeconds() : (entry.timeoutSeconds ?? 10);

beforeAll(() => {
  main = synthesize();
}, 120_000);

describe('stacks', () => {
  it('keep the shared resources in the root, with one nested stack per area and no function, route or role', () => {
    const types = new Set(Object.values(main.rootResources).map((resource) => resource.Type));

    main.root.resourceCountIs('AWS::CloudFormation::Stack', areas.length);
    expect([...main.views.keys()]).toEqual(areas.map((area) => area.id));
    for (const type of ['AWS::Lambda::Function', 'AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Integration', 'AWS::IAM::Role']) {
      expect(types.has(type), type).toBe(false);
    }
    for (const type of [
      'AWS::DynamoDB::GlobalTable',
      'AWS::SNS::Topic',
      'AWS::SQS::Queue',
      'AWS::ApiGatewayV2::Api',
      'AWS::CloudWatch::Dashboard',
    ]) {
      expect(types.has(type), type).toBe(true);
    }
  });

  it.each(areas)('$id holds exactly the functions of its area', (area) => {
    const view = viewOf(area.id);
    const functions = Object.keys(view.template.findResources('AWS::Lambda::Function'));
    const expected = functionsOf(area).map((entry) => functionIdIn(view, entry.id));

    expect(new Set(expected).size).toBe(functionsOf(area).length);
    expect(functions.sort()).toEqual(expected.sort());
  });

  it.each(areas)('$id takes each of its parameters from a resource of the root, never from another area', (area) => {
    const view = viewOf(area.id);
    const sources = Object.values(view.parameterValues).flatMap(referencedIds);

    expect(Object.keys(view.parameterValues).sort()).toEqual([...view.parameters].sort());
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(main.rootResources[source], source).toBeDefined();
      expect(main.rootResources[source]?.Type, source).not.toBe('AWS::CloudFormation::Stack');
    }
    expect([main.rootResources[view.stackResourceId]?.DependsOn ?? []].flat()).toEqual([]);
  });
});

describe('table', () => {
  it('is on-demand with TTL, point-in-time recovery and AWS-managed encryption, and retained except on a rolled-back create', () => {
    main.root.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    main.root.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'RetainExceptOnCreate',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
        Replicas: [
          Match.objectLike({
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
            // Off outside 'prod': with it, a rolled-back first deploy could not delete the table it created.
            DeletionProtectionEnabled: false,
          }),
        ],
      }),
    });
  });

  it('streams the new image of every change (the event publisher reads it)', () => {
    main.root.hasResourceProperties('AWS::DynamoDB::GlobalTable', { StreamSpecification: { StreamViewType: 'NEW_IMAGE' } });
    expect(tableSchema.streamViewType).toBe('NEW_IMAGE');
  });

  it('has exactly the global secondary indexes of functions/wiring/table.ts, string keys, all attributes projected', () => {
    const table = Object.values(main.root.findResources('AWS::DynamoDB::GlobalTable'))[0] as Resource;
    const indexes = table.Properties.GlobalSecondaryIndexes as Array<{
      IndexName: string;
      KeySchema: Array<{ AttributeName: string; KeyType: string }>;
      Projection: { ProjectionType: string };
    }>;
    const definitions = table.Properties.AttributeDefinitions as Array<{ AttributeName: string; AttributeType: string }>;

    expect(
      indexes.map((index) => ({
        indexName: index.IndexName,
        partitionKey: index.KeySchema.find((key) => key.KeyType === 'HASH')?.AttributeName,
        sortKey: index.KeySchema.find((key) => key.KeyType === 'RANGE')?.AttributeName,
      })),
    ).toEqual(tableSchema.globalSecondaryIndexes.map((index) => ({ ...index })));
    expect(indexes.map((index) => index.Projection.ProjectionType)).toEqual(indexes.map(() => 'ALL'));
    expect(definitions.every((definition) => definition.AttributeType === 'S')).toBe(true);
  });

  it('has every index that handler code queries by name', () => {
    const tableIndexes = new Set<string>(tableSchema.globalSecondaryIndexes.map((index) => index.indexName));
    const sources = readdirSync(functionsDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const used = sources.flatMap((file) =>
      [...readFileSync(path.join(functionsDir, file), 'utf8').matchAll(/IndexName:\s*['"]([^'"]+)['"]/g)].map(
        (match) => match[1] as string,
      ),
    );

    expect(used.filter((name) => !tableIndexes.has(name))).toEqual([]);
  });
});

describe('queues', () => {
  it.each(queues)('shared queue $id is in the root and redrives to its dead-letter queue after maxReceiveCount receives', (definition) => {
    const queue = queueNamed(`<${definition.id} queue>`);

    expect(queue.VisibilityTimeout).toBe(definition.visibilityTimeoutSeconds);
    expect(renderWith(main.rootNames, queue.RedrivePolicy.deadLetterTargetArn)).toBe(`<${definition.id} dead-letter queue>.Arn`);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(definition.maxReceiveCount);
    expect(queueNamed(`<${definition.id} dead-letter queue>`).MessageRetentionPeriod).toBe(14 * 24 * 3600);
  });

  it('encrypts every queue of every stack with SQS-managed keys and denies requests without TLS', () => {
    const templates = [main.root, ...[...main.views.values()].map((view) => view.template)];
    let checked = 0;
    for (const template of templates) {
      const all = template.findResources('AWS::SQS::Queue');
      for (const [queueId, queue] of Object.entries(all)) {
        expect(queue.Properties.SqsManagedSseEnabled, queueId).toBe(true);
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: queueId }],
          PolicyDocument: {
            Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
          },
        });
        checked += 1;
      }
    }

    // Shared queues and each event subscriber's queue, each with its dead-letter queue; each stream consumer's failure queue.
    expect(checked).toBe(2 * (queues.length + eventSubscribers.length) + streamConsumers.length);
  });
});

describe('APIs', () => {
  it('has an HTTP API with CORS for the service headers, access logs and throttling on $default', () => {
    const apiId = [...main.rootNames].find(([, name]) => name === 'HTTP API')?.[0];
    main.root.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({
        AllowHeaders: [...corsAllowHeaders],
        AllowOrigins: ['*'],
        ExposeHeaders: ['X-Trace-Id'],
      }),
    });
    main.root.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      ApiId: { Ref: apiId },
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] },
        Format: Match.stringLikeRegexp('\\$context\\.requestId'),
      },
      DefaultRouteSettings: { ThrottlingBurstLimit: 1000, ThrottlingRateLimit: 500 },
    });
  });

  it('lets browsers send every x- header an HTTP API handler reads (X-Service-Project-Id of web push included)', () => {
    // Every module of the HTTP handlers, and the shared wrapper that authenticates them.
    const sources = [
      ...readdirSync(path.join(functionsDir, 'http'), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => path.join(functionsDir, 'http', file)),
      path.join(functionsDir, 'edge/http.ts'),
    ];
    const read = new Set(
      sources.flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/headers\[['"](x-[a-z-]+)['"]\]/g)].map((match) => match[1] as string),
      ),
    );
    const allowed = new Set(corsAllowHeaders.map((header) => header.toLowerCase()));

    expect(read).toContain('x-service-project-id');
    expect([...read].filter((header) => !allowed.has(header))).toEqual([]);
    expect(read).toContain('x-service-api-key');
    expect(corsAllowHeaders).toContain('X-Service-Project-Id');
  });

  it('has a WebSocket API with an auto-deployed, throttled prod stage', () => {
    const apiId = [...main.rootNames].find(([, name]) => name === 'WebSocket API')?.[0];
    main.root.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      ApiId: { Ref: apiId },
      StageName: webSocketStageName,
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingBurstLimit: 1000, ThrottlingRateLimit: 500 },
    });
    expect(webSocketRoutes.map((route) => route.routeKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
  });

  it('selects WebSocket routes on the type frames carry, and answers each frame with an answer by a MOCK route', () => {
    main.root.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'WEBSOCKET',
      RouteSelectionExpression: '$request.body.type',
    });
    expect(answeredFrames.map(({ frame }) => frame.type)).toEqual(['ping']);
    for (const { frame, area } of answeredFrames) {
      const { template } = viewOf(area);
      const [routeId, route] =
        Object.entries(template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: frame.type } }))[0] ?? [];
      if (!route) throw new Error(`No route for ${frame.type} frames in the ${area} stack`);
      const integrationId = (route.Properties.Target['Fn::Join'][1] as unknown[])[1] as { Ref: string };
      expect(template.toJSON().Resources[integrationId.Ref]).toMatchObject({
        Type: 'AWS::ApiGatewayV2::Integration',
        Properties: { IntegrationType: 'MOCK', RequestTemplates: { '200': '{"statusCode": 200}' } },
      });
      template.hasResourceProperties('AWS::ApiGatewayV2::IntegrationResponse', {
        IntegrationId: integrationId,
        IntegrationResponseKey: '/200/',
        ResponseTemplates: { '200': JSON.stringify(frame.answer) },
      });
      // The catch-all: any other status of the integration answers the same frame.
      template.hasResourceProperties('AWS::ApiGatewayV2::IntegrationResponse', {
        IntegrationId: integrationId,
        IntegrationResponseKey: '$default',
        ResponseTemplates: { '200': JSON.stringify(frame.answer) },
      });
      expect(
        Object.values(template.findResources('AWS::ApiGatewayV2::IntegrationResponse')).filter(
          (response) => response.Properties.IntegrationId.Ref === integrationId.Ref,
        ),
      ).toHaveLength(2);
      expect(route.Properties.RouteResponseSelectionExpression).toBe('$default');
      template.hasResourceProperties('AWS::ApiGatewayV2::RouteResponse', { RouteId: { Ref: routeId }, RouteResponseKey: '$default' });
    }
  });

  it('has one API route per WebSocket route and HTTP API route of functions/wiring/, in the area stacks, and no other', () => {
    const routes = resourcesOfType('AWS::ApiGatewayV2::Route');

    main.root.resourceCountIs('AWS::ApiGatewayV2::Route', 0);
    expect(routes.map(({ view, resource }) => `${view.area.id} ${resource.Properties.RouteKey}`).sort()).toEqual(
      [
        ...apiRouteCases.map((route) => `${route.area} ${route.routeKey}`),
        ...answeredFrames.map(({ area, frame }) => `${area} ${frame.type}`),
      ].sort(),
    );
  });

  it.each(apiRouteCases)('serves $routeKey on the $api from the $area stack, invoking its own function', (route) => {
    const view = viewOf(route.area);
    const functionId = functionOfRoute(view, route.routeKey, route.api);

    expect(functionId).toBe(functionIdIn(view, route.id));
    expect(
      Object.values(view.template.findResources('AWS::Lambda::Url')).filter((url) => idOf(url.Properties.TargetFunctionArn) === functionId),
    ).toEqual([]);
  });

  it('deploys each stage after the area stacks that add its routes, so it starts complete', () => {
    const stages = main.root.findResources('AWS::ApiGatewayV2::Stage');
    const dependsOn = (api: string) => {
      const stage = Object.values(stages).find((candidate) => renderWith(main.rootNames, candidate.Properties.ApiId) === `<${api}>`);
      return [stage?.DependsOn ?? []].flat().sort();
    };
    const stackOf = (areaIds: string[]) => [...new Set(areaIds)].map((areaId) => viewOf(areaId).stackResourceId).sort();

    expect(dependsOn('HTTP API')).toEqual(stackOf(apiRouteCases.filter((route) => route.api === 'HTTP API').map((route) => route.area)));
    expect(dependsOn('WebSocket API')).toEqual(
      stackOf(apiRouteCases.filter((route) => route.api === 'WebSocket API').map((route) => route.area)),
    );
  });
});

describe.each(functionEntries)('function $id ($kind, $area area)', (entry) => {
  it('runs its handler with the function defaults and a log group kept one month', () => {
    const view = viewOfFunction(entry);
    const properties = view.resources[functionOf(entry)]?.Properties as Record<string, any>;

    expect(properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: timeoutOf(entry),
      TracingConfig: { Mode: 'Active' },
    });
    expect(view.resources[idOf(properties.LoggingConfig.LogGroup)]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { RetentionInDays: 30 },
    });
  });

  it('gets exactly the grants its bindings name', () => {
    expect(grantsOf(entry)).toEqual(expectedGrants(entry));
  });

  it('gets exactly the environment its bindings name', () => {
    expect(environmentOf(viewOfFunction(entry), functionOf(entry))).toEqual(expectedEnvironment(entry));
  });
});

describe('least privilege', () => {
  const has = (binding: Binding) => (entry: FunctionEntry) => entry.bindings.includes(binding);
  const idsOf = (entries: readonly FunctionEntry[]) => entries.map((entry) => entry.id).sort();

  it('lets no function scan the table, and only the stream consumers read its stream', () => {
    expect(functionsAllowedTo('dynamodb:Scan')).toEqual(new Map());
    for (const action of streamReadActions) {
      expect([...functionsAllowedTo(action).keys()].sort(), action).toEqual(idsOf(streamConsumers.map((consumer) => entryOf(consumer.id))));
      expect([...functionsAllowedTo(action).values()].flat(), action).toEqual(streamConsumers.map(() => `${action} on <table>.StreamArn`));
    }
    expect(idsOf(streamConsumers.map((consumer) => entryOf(consumer.id)))).toEqual(['EventPublisher']);
  });

  it('gives read-only routes (ListRooms, GetHealth) no write, and a public route (GetHealth) no SQS or SNS permission at all', () => {
    for (const functionId of ['ListRooms', 'GetHealth']) {
      const grants = grantsOf(entryOf(functionId));
      expect(
        grants.filter((grant) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(grant)),
        functionId,
      ).toEqual([]);
      expect(
        grants.filter((grant) => grant.startsWith('dynamodb:Query on ')),
        functionId,
      ).not.toEqual([]);
    }
    expect(grantsOf(entryOf('GetHealth')).filter((grant) => /^(sqs|sns|kms|secretsmanager|states|execute-api):/.test(grant))).toEqual([]);
  });

  it('lets only the events:publish function (EventPublisher) publish to SNS, on the event topic and its key', () => {
    const publishers = functionsAllowedTo('sns:Publish');

    expect([...publishers.keys()]).toEqual(idsOf(functionEntries.filter(has('events:publish'))));
    expect([...publishers.keys()]).toEqual(['EventPublisher']);
    expect([...publishers.values()].flat()).toEqual(['sns:Publish on <event topic>']);
    expect([...functionsAllowedTo('kms:GenerateDataKey*').keys()]).toEqual(['EventPublisher']);
  });

  it.each(secretIds)('lets only the functions bound to secret:%s read it; each gets its ARN, never its value', (secretId) => {
    const binding = `secret:${secretId}` as Binding;
    const readers = [...functionsAllowedTo('secretsmanager:GetSecretValue')].filter(([, grants]) =>
      grants.includes(`secretsmanager:GetSecretValue on <${secretId} secret>`),
    );
    const bound = functionEntries.filter(has(binding));

    expect(bound.length).toBeGreaterThan(0);
    expect(readers.map(([functionId]) => functionId).sort()).toEqual(idsOf(bound));
    for (const entry of functionEntries) {
      const environment = environmentOf(viewOfFunction(entry), functionOf(entry));
      expect(environment[bindingVariable(binding)], entry.id).toBe(bound.includes(entry) ? `<${secretId} secret>` : undefined);
      expect(
        Object.values(environment).filter((value) => value.includes(`<${secretId} secret>`)),
        entry.id,
      ).toHaveLength(bound.includes(entry) ? 1 : 0);
      expect(Object.keys(environment), entry.id).not.toContain(secretDefinitions[secretId].setting);
    }
  });

  it('lets the operator routes, and only them, read the operator key', () => {
    const operatorRoutes = httpRoutes.filter((route) => route.auth === 'operator').map((route) => route.id);

    expect(operatorRoutes.length).toBeGreaterThan(0);
    expect(idsOf(functionEntries.filter(has('secret:operator-key')))).toEqual(operatorRoutes.sort());
  });

  it('lets exactly the connections:manage functions, consumers included, post to connections of the prod stage only', () => {
    const managers = functionsAllowedTo('execute-api:ManageConnections');
    const expected = functionEntries.filter(has('connections:manage'));

    expect(expected.filter((entry) => entry.kind !== 'http' && entry.kind !== 'webSocket').map((entry) => entry.id)).toEqual(
      expect.arrayContaining(['RealtimeWorker', 'WatcherNotifier']),
    );
    expect([...managers.keys()].sort()).toEqual(idsOf(expected));
    for (const [functionId, grants] of managers) {
      expect(grants, functionId).toEqual([`execute-api:ManageConnections on ${connectionsArn}`]);
      expect(environmentOf(viewOf(entryOf(functionId).area), functionOf(entryOf(functionId))).CONNECTIONS_ENDPOINT).toBe(callbackUrl);
    }
    const otherExecuteApi = [...functionsAllowedTo('execute-api:Invoke').keys()];
    expect(otherExecuteApi).toEqual([]);
  });

  it('lets only the stateMachine:WebhookRetry functions (the dispatcher and the replay route) start the retry state machine', () => {
    const starters = functionsAllowedTo('states:StartExecution');
    const expected = functionEntries.filter(has('stateMachine:WebhookRetry'));

    expect(idsOf(expected)).toEqual(['ReplayWebhookDelivery', 'WebhookDispatcher']);
    expect([...starters.keys()].sort()).toEqual(idsOf(expected));
    for (const grants of starters.values()) expect(grants).toEqual(['states:StartExecution on <WebhookRetry state machine>']);
    // No other role either: the state machine's own role only invokes its tasks.
    const otherStarters = resourcesOfType('AWS::IAM::Policy').filter(({ resource }) =>
      JSON.stringify(resource.Properties.PolicyDocument).includes('"states:'),
    );
    expect(otherStarters).toHaveLength(expected.length);
  });

  it('uses no managed policies in any stack: each role writes only to its own log group', () => {
    const roles = [
      ...Object.values(main.root.findResources('AWS::IAM::Role')),
      ...resourcesOfType('AWS::IAM::Role').map(({ resource }) => resource),
    ];

    expect(roles.length).toBe(functionEntries.length + stateMachines.length);
    expect(roles.filter((role) => role.Properties.ManagedPolicyArns !== undefined)).toEqual([]);
  });

  it('grants no wildcard resource except X-Ray and state machine log delivery (neither has resource-level permissions)', () => {
    const starred = { function: new Set<string>(), stateMachine: new Set<string>(), other: new Set<string>() };
    for (const { view, resource } of resourcesOfType('AWS::IAM::Policy')) {
      for (const roleId of referencedIds(resource.Properties.Roles)) {
        const name = view.names.get(roleId) ?? '';
        const kind = name.endsWith(' role') ? 'function' : roleId.includes('StateMachineRole') ? 'stateMachine' : 'other';
        for (const grant of grantsOfRole(view, roleId).filter((candidate) => candidate.endsWith(' on *')))
          starred[kind].add(grant.replace(/ on \*$/, ''));
      }
    }

    expect(starred.function).toEqual(new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    expect(starred.stateMachine).toEqual(
      new Set([
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:GetSamplingRules',
        'xray:GetSamplingTargets',
        'logs:CreateLogDelivery',
        'logs:GetLogDelivery',
        'logs:UpdateLogDelivery',
        'logs:DeleteLogDelivery',
        'logs:ListLogDeliveries',
        'logs:PutResourcePolicy',
        'logs:DescribeResourcePolicies',
        'logs:DescribeLogGroups',
      ]),
    );
    expect(starred.other).toEqual(new Set());
    expect(Object.keys(main.root.findResources('AWS::IAM::Policy'))).toEqual([]);
  });
});

describe('logs', () => {
  it('keeps every log group (functions, HTTP access logs, state machine executions) for one month', () => {
    const groups = [
      ...Object.values(main.root.findResources('AWS::Logs::LogGroup')),
      ...resourcesOfType('AWS::Logs::LogGroup').map(({ resource }) => resource),
    ];

    expect(groups.length).toBe(functionEntries.length + 1 + stateMachines.length);
    expect(groups.map((group) => group.Properties.RetentionInDays)).toEqual(groups.map(() => 30));
  });
});

/** Evaluates the intrinsic functions a log group name uses, with the pseudo parameters given. */
function evaluate(value: unknown, pseudo: Record<string, string>): string {
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

describe.each(stateMachines)('state machine $id', (machine) => {
  const fileText = () => readFileSync(path.join(repoRoot, machine.definitionFile), 'utf8');
  const propertiesOf = () => {
    const { view, id } = stateMachineOf(machine.id);
    return { view, properties: view.resources[id]?.Properties as Record<string, any> };
  };

  it('is a Standard state machine that logs every event without execution data, and is traced', () => {
    const { view, properties } = propertiesOf();

    expect(properties).toMatchObject({
      StateMachineType: 'STANDARD',
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      TracingConfiguration: { Enabled: true },
    });
    expect(render(view, properties.LoggingConfiguration.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn)).toBe(
      `<${machine.id} execution log group>.Arn`,
    );
    expect(view.resources[idOf(properties.LoggingConfiguration.Destinations)]?.Properties.RetentionInDays).toBe(30);
  });

  it('logs to a group named after the creating stack, so a re-create next to a retained group does not fail', () => {
    const { view, properties } = propertiesOf();
    const name = view.resources[idOf(properties.LoggingConfiguration.Destinations)]?.Properties.LogGroupName;
    const stackId = (uuid: string) => `arn:aws:cloudformation:eu-west-1:123456789012:stack/Chat-dev-WebhooksNestedStack-1ABC/${uuid}`;
    const first = evaluate(name, { 'AWS::StackId': stackId('0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0') });
    const second = evaluate(name, { 'AWS::StackId': stackId('11111111-2222-3333-4444-555555555555') });

    expect(JSON.stringify(name)).toContain('"Ref":"AWS::StackId"');
    expect(first).toBe(`/aws/vendedlogs/states/chat-dev-${machine.id}-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0`);
    expect(second).not.toBe(first);
    expect(first).toMatch(/^[\w\-./#]{1,512}$/);
  });

  it('deploys the ASL file verbatim, each task placeholder substituted by its task function ARN', () => {
    const { view, properties } = propertiesOf();

    expect(properties.DefinitionString).toBe(fileText());
    expect(
      Object.fromEntries(
        Object.entries(properties.DefinitionSubstitutions as Record<string, unknown>).map(([key, value]) => [key, render(view, value)]),
      ),
    ).toEqual(Object.fromEntries(machine.tasks.map((task) => [task.placeholder, `<${task.id} function>.Arn`])));
    expect(properties.DefinitionS3Location).toBeUndefined();
  });

  it('is the definition the local interpreter runs (lib/local/step-functions.ts loadDefinition)', () => {
    const { view, properties } = propertiesOf();
    const standInArn = (taskId: string) => `arn:aws:lambda:eu-west-1:123456789012:function:${taskId}`;

    // What CloudFormation deploys: DefinitionString with every ${key} of DefinitionSubstitutions replaced.
    let deployed = properties.DefinitionString as string;
    for (const [key, value] of Object.entries(properties.DefinitionSubstitutions as Record<string, unknown>)) {
      deployed = deployed.replaceAll(`\${${key}}`, standInArn(render(view, value).replace(/^<(.+) function>\.Arn$/, '$1')));
    }

    expect(deployed).not.toContain('${');
    expect(JSON.parse(deployed)).toEqual(loadDefinition(repoRoot, machine, standInArn));
  });

  it('may invoke exactly its task functions, and nothing else', () => {
    const { view, properties } = propertiesOf();
    const grants = grantsOfRole(view, idOf(properties.RoleArn)).filter((grant) => !grant.endsWith(' on *'));

    expect(grants).toEqual(
      machine.tasks.flatMap((task) => on(['lambda:InvokeFunction'], `<${task.id} function>.Arn`, `<${task.id} function>.Arn:*`)).sort(),
    );
  });
});

const sqsConsumerCases = [
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

describe.each(sqsConsumerCases)('$kind $id', (consumer) => {
  const entry = entryOf(consumer.id);

  it('reads its queue in batches of batchSize, maxConcurrency batches at once, with partial batch responses and no batching window', () => {
    const view = viewOfFunction(entry);
    const mapping = mappingOf(view, functionOf(entry));

    expect(render(view, mapping.EventSourceArn)).toBe(`${consumer.queueName}.Arn`);
    expect(mapping).toMatchObject({
      BatchSize: consumer.batchSize,
      ScalingConfig: { MaximumConcurrency: consumer.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(mapping.MaximumBatchingWindowInSeconds).toBeUndefined();
    expect(mapping.Enabled ?? true).toBe(true);
    expect(view.resources[functionOf(entry)]?.Properties.Timeout).toBe(consumer.timeoutSeconds);
  });

  it('has a queue whose visibility timeout exceeds the function timeout, and a dead-letter queue after maxReceiveCount receives', () => {
    const view = viewOfFunction(entry);
    const queue = queueNamed(consumer.queueName, consumer.inArea ? view : undefined);
    const deadLetterName = consumer.queueName.replace(/ queue>$/, ' dead-letter queue>');

    expect(queue.VisibilityTimeout).toBe(consumer.visibilityTimeoutSeconds);
    expect(queue.VisibilityTimeout).toBeGreaterThan(view.resources[functionOf(entry)]?.Properties.Timeout);
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(consumer.maxReceiveCount);
    expect(
      consumer.inArea
        ? render(view, queue.RedrivePolicy.deadLetterTargetArn)
        : renderWith(main.rootNames, queue.RedrivePolicy.deadLetterTargetArn),
    ).toBe(`${deadLetterName}.Arn`);
  });

  it('fails the synth when the visibility timeout does not exceed the consumer timeout', () => {
    expect(() => assertVisibilityExceedsTimeout(consumer, consumer.timeoutSeconds)).toThrow(/must exceed/);
    expect(() => assertVisibilityExceedsTimeout(consumer, consumer.timeoutSeconds + 1)).not.toThrow();
  });

  it('fails the synth for a maxConcurrency an SQS event source does not accept (2 to 1,000)', () => {
    const { min, max } = sqsMaxConcurrencyRange;

    expect(() => assertMaxConcurrencyInRange(consumer)).not.toThrow();
    for (const maxConcurrency of [min - 1, max + 1, min + 0.5]) {
      expect(() => assertMaxConcurrencyInRange({ ...consumer, maxConcurrency }), String(maxConcurrency)).toThrow(
        new RegExp(`${consumer.id} has maxConcurrency`),
      );
    }
    expect(() => assertMaxConcurrencyInRange({ ...consumer, maxConcurrency: min })).not.toThrow();
  });
});

describe.each(eventSubscribers)('event subscriber $id', (subscriber) => {
  const view = () => viewOfFunction(entryOf(subscriber.id));

  it('has its own queue in its area, subscribed to the root event topic with raw delivery and a filter on the event type', () => {
    const subscriptions = Object.values(view().template.findResources('AWS::SNS::Subscription')).filter(
      (subscription) => render(view(), subscription.Properties.Endpoint) === `<${subscriber.id} queue>.Arn`,
    );

    expect(subscriptions).toHaveLength(1);
    const properties = subscriptions[0]?.Properties as Record<string, unknown>;
    expect(properties).toMatchObject({ Protocol: 'sqs', RawMessageDelivery: true });
    expect(render(view(), properties.TopicArn)).toBe('<event topic>');
    expect(properties.FilterPolicy).toEqual(
      subscriber.eventTypes === 'all' ? undefined : { [EVENT_TYPE_ATTRIBUTE]: [...subscriber.eventTypes] },
    );
  });

  it('lets the event topic, and no other sender, deliver to its queue', () => {
    const policies = Object.values(view().template.findResources('AWS::SQS::QueuePolicy')).filter(
      (policy) => render(view(), policy.Properties.Queues) === `[<${subscriber.id} queue>]`,
    );
    const allows = ((policies[0]?.Properties.PolicyDocument.Statement ?? []) as Array<Record<string, any>>).filter(
      (statement) => statement.Effect === 'Allow',
    );
    const allow = allows[0] as Record<string, any>;

    expect(policies).toHaveLength(1);
    expect(allows).toHaveLength(1);
    expect(allow).toMatchObject({ Action: 'sqs:SendMessage', Principal: { Service: 'sns.amazonaws.com' } });
    expect(Object.keys(allow.Condition)).toEqual(['ArnEquals']);
    expect(Object.keys(allow.Condition.ArnEquals)).toEqual(['aws:SourceArn']);
    expect(render(view(), allow.Condition.ArnEquals['aws:SourceArn'])).toBe('<event topic>');
  });
});

describe.each(streamConsumers)('stream consumer $id', (consumer) => {
  it('reads the table stream from TRIM_HORIZON with its filters, partial batch responses, bounded retries that bisect the batch, and notes failed batches in its queue', () => {
    const entry = entryOf(consumer.id);
    const view = viewOfFunction(entry);
    const mapping = mappingOf(view, functionOf(entry));

    expect(render(view, mapping.EventSourceArn)).toBe('<table>.StreamArn');
    expect(mapping).toMatchObject({
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: consumer.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10,
      MaximumRecordAgeInSeconds: 3600,
      BisectBatchOnFunctionError: true,
    });
    expect((mapping.FilterCriteria.Filters as Array<{ Pattern: string }>).map((filter) => JSON.parse(filter.Pattern))).toEqual(
      consumer.filters,
    );
    expect(render(view, mapping.DestinationConfig.OnFailure.Destination)).toBe(`<${consumer.id}Failures queue>.Arn`);
    expect(view.resources[functionOf(entry)]?.Properties.Timeout).toBe(consumer.timeoutSeconds);
  });

  it('keeps the notes of failed batches 14 days in a queue nothing consumes, so it needs no dead-letter queue', () => {
    const view = viewOfFunction(entryOf(consumer.id));
    const failures = queueNamed(`<${consumer.id}Failures queue>`, view);

    expect(failures.MessageRetentionPeriod).toBe(14 * 24 * 3600);
    expect(failures.RedrivePolicy).toBeUndefined();
  });

  it('invokes the publisher only for inserted messages and outbox items', () => {
    expect(consumer.filters).toEqual([
      { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }, { prefix: 'EVT#' }] } } } },
    ]);
  });
});

describe.each(streamingRoutes)('streaming route $id ($method $path)', (route) => {
  const view = () => viewOf(areaOfRoute(route.id));

  it('has a function URL in RESPONSE_STREAM mode, auth type NONE, with CORS for its method, Authorization and Last-Event-ID', () => {
    const properties = view().resources[urlOfRoute(view(), route.id)]?.Properties as Record<string, unknown>;

    expect(properties).toMatchObject({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      Cors: { AllowMethods: [route.method], AllowOrigins: ['*'], AllowHeaders: expect.arrayContaining(['Authorization', 'Last-Event-ID']) },
    });
    expect((properties.Cors as { AllowHeaders: string[] }).AllowHeaders).toEqual([...streamCorsAllowHeaders]);
    expect(properties.Qualifier).toBeUndefined();
  });

  it('may be invoked by anyone through its URL only (the handler verifies the JWT itself)', () => {
    const functionId = functionIdIn(view(), route.id);
    const permissions = Object.values(
      view().template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: { 'Fn::GetAtt': [functionId, 'Arn'] } } }),
    ).map((permission) => permission.Properties);

    expect(permissions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', Principal: '*', FunctionUrlAuthType: 'NONE' }),
        expect.objectContaining({ Action: 'lambda:InvokeFunction', Principal: '*', InvokedViaFunctionUrl: true }),
      ]),
    );
    expect(
      permissions.filter(
        (permission) => permission.Principal === '*' && !permission.FunctionUrlAuthType && !permission.InvokedViaFunctionUrl,
      ),
    ).toEqual([]);
  });

  it("runs up to Lambda's 15 minutes, longer than a stream lasts (SSE_MAX_DURATION_SECONDS)", () => {
    expect(view().resources[functionIdIn(view(), route.id)]?.Properties.Timeout).toBe(900);
    expect(handlerConfig.SSE_MAX_DURATION_SECONDS).toBeLessThan(streamingRouteTimeout.toSeconds());
  });

  it('reserves no concurrency by default (a reservation is streamReservedConcurrency, off unless set)', () => {
    expect(route.reservedConcurrency).toBe('streams');
    expect(resolveChatConfig().streamReservedConcurrency).toBeUndefined();
    expect(view().resources[functionIdIn(view(), route.id)]?.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('is a root stack output (SseUrl) carrying the function URL', () => {
    const { view: outputView, value } = nestedOutput(main.outputs[sseUrlOutputId(route.id, streamingRoutes.length)]?.Value);

    expect(outputView.area.id).toBe(areaOfRoute(route.id));
    expect(value).toEqual({ 'Fn::GetAtt': [urlOfRoute(view(), route.id), 'FunctionUrl'] });
  });
});

describe('function URLs', () => {
  it('exist for the functionUrl routes only, and only they may be invoked by anyone', () => {
    const urls = resourcesOfType('AWS::Lambda::Url');
    const publicTargets = resourcesOfType('AWS::Lambda::Permission')
      .filter(({ resource }) => resource.Properties.Principal === '*')
      .map(({ view, resource }) => render(view, resource.Properties.FunctionName));

    main.root.resourceCountIs('AWS::Lambda::Url', 0);
    expect(urls.map(({ view, resource }) => render(view, resource.Properties.TargetFunctionArn)).sort()).toEqual(
      streamingRoutes.map((route) => `<${route.id} function>.Arn`).sort(),
    );
    expect(new Set(publicTargets)).toEqual(new Set(streamingRoutes.map((route) => `<${route.id} function>.Arn`)));
  });

  it('reserve no concurrency by default, so the app deploys on an account with the smallest quota', () => {
    const reserved = resourcesOfType('AWS::Lambda::Function')
      .filter(({ resource }) => resource.Properties.ReservedConcurrentExecutions !== undefined)
      .map(({ view, id }) => view.names.get(id));

    expect(reserved).toEqual([]);
  });

  it('are output as SseUrl while there is one streaming route, as <RouteId>SseUrl each once there are several', () => {
    const outputs = Object.keys(main.outputs);

    expect(sseUrlOutputId('StreamRoom', 1)).toBe('SseUrl');
    expect(sseUrlOutputId('StreamRoom', 2)).toBe('StreamRoomSseUrl');
    expect(outputs.filter((output) => output.endsWith('SseUrl'))).toHaveLength(streamingRoutes.length);
    if (streamingRoutes.length === 1) expect(outputs).toContain('SseUrl');
  });
});

describe('outputs', () => {
  const rootOutputs = () => ({
    HttpApiUrl: { text: 'https://<HTTP API>.execute-api.<AWS::Region>.<AWS::URLSuffix>/', type: 'AWS::ApiGatewayV2::Api' },
    WebSocketUrl: {
      text: `wss://<WebSocket API>.execute-api.<AWS::Region>.<AWS::URLSuffix>/${webSocketStageName}`,
      type: 'AWS::ApiGatewayV2::Api',
    },
    ConnectionsEndpoint: { text: callbackUrl, type: 'AWS::ApiGatewayV2::Api' },
    TableName: { text: '<table>', type: 'AWS::DynamoDB::GlobalTable' },
    EventTopicArn: { text: '<event topic>', type: 'AWS::SNS::Topic' },
    ...Object.fromEntries(
      queues.flatMap((queue) => [
        [`${queue.id}QueueUrl`, { text: `<${queue.id} queue>`, type: 'AWS::SQS::Queue' }],
        [`${queue.id}DeadLetterQueueUrl`, { text: `<${queue.id} dead-letter queue>`, type: 'AWS::SQS::Queue' }],
      ]),
    ),
    ...Object.fromEntries(
      secretIds.map((secretId) => [
        `${pascalCase(secretId)}SecretArn`,
        { text: `<${secretId} secret>`, type: 'AWS::SecretsManager::Secret' },
      ]),
    ),
    AlarmTopicArn: { text: '<alarm topic>', type: 'AWS::SNS::Topic' },
    DashboardName: { text: '<dashboard>', type: 'AWS::CloudWatch::Dashboard' },
  });

  it('are exactly the URLs, names and ARNs clients and operators read', () => {
    expect(Object.keys(main.outputs).sort()).toEqual(
      [
        ...Object.keys(rootOutputs()),
        ...streamingRoutes.map((route) => sseUrlOutputId(route.id, streamingRoutes.length)),
        ...stateMachines.map((machine) => `${machine.id}StateMachineArn`),
      ].sort(),
    );
  });

  it('point at the root resources they name', () => {
    for (const [name, { text, type }] of Object.entries(rootOutputs())) {
      const value = main.outputs[name]?.Value;
      expect(renderWith(main.rootNames, value), name).toBe(text);
      expect(
        referencedIds(value)
          .filter((id) => !id.startsWith('AWS::'))
          .map((id) => main.rootResources[id]?.Type),
        name,
      ).toEqual([type]);
    }
  });

  it.each(stateMachines)('carry the ARN of the $id state machine from its area stack', (machine) => {
    const { view, value } = nestedOutput(main.outputs[`${machine.id}StateMachineArn`]?.Value);

    expect(render(view, value)).toBe(`<${machine.id} state machine>`);
  });
});

const generatedSecrets = Object.entries(secretDefinitions).flatMap(([secretId, definition]) =>
  definition.generate ? [[secretId, { ...definition, generate: definition.generate }] as const] : [],
);
const providedSecrets = Object.entries(secretDefinitions).filter(([, definition]) => !definition.generate);

const secretResource = (secretId: string) => {
  const id = [...main.rootNames].find(([, name]) => name === `${secretId} secret`)?.[0] as string;
  return main.rootResources[id] as Resource;
};

describe.each(generatedSecrets)('secret %s', (secretId, definition) => {
  it(`is generated by Secrets Manager (${definition.generate.length} characters${definition.generate.hexOnly ? ' of hex' : ''})${definition.retain ? ', retained like the table' : ''}`, () => {
    const secret = secretResource(secretId);
    const generate = secret.Properties.GenerateSecretString as Record<string, any>;
    // Secrets Manager's alphabet: letters, digits and this punctuation (GetRandomPassword).
    const punctuation = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
    const alphabet = [
      ...(generate.ExcludeUppercase ? [] : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
      ...(generate.ExcludeLowercase ? [] : 'abcdefghijklmnopqrstuvwxyz'),
      ...(generate.ExcludeNumbers ? [] : '0123456789'),
      ...(generate.ExcludePunctuation ? [] : punctuation),
      ...(generate.IncludeSpace ? [' '] : []),
    ].filter((character) => !(generate.ExcludeCharacters ?? '').includes(character));

    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(alphabet.sort().join('')).toBe(
      definition.generate.hexOnly ? '0123456789abcdef' : '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
    );
    expect(generate.PasswordLength).toBe(definition.generate.length);
    expect(generate.SecretStringTemplate).toBeUndefined();
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(secret.DeletionPolicy).toBe(definition.retain ? 'RetainExceptOnCreate' : 'Delete');
  });
});

describe.each(providedSecrets)('operator-provided secret %s', (secretId) => {
  it('starts as the "unset" placeholder, which the service reads as not set, until the operator puts the key', () => {
    const secret = secretResource(secretId);
    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(secret.Properties.GenerateSecretString).toBeUndefined();
    expect(secret.Properties.SecretString).toBe(UNSET_SECRET_PLACEHOLDER);
  });
});

describe('bindings', () => {
  const probe = (bindings: Binding[]): Area => ({
    id: 'Probe',
    summary: 'One route with the bindings under test',
    httpRoutes: [
      { id: 'Probe', method: 'GET', path: '/probe', handler: 'http/health/get-health.ts', auth: 'none', bindings, summary: 'Probe' },
    ],
  });

  it('fail the synth for a state machine of another area', () => {
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['stateMachine:WebhookRetry'])] })).toThrow(
      /Probe area binds state machine WebhookRetry, which is not one of its own/,
    );
  });

  it('fail the synth for a binding functions/wiring/bindings.ts does not know', () => {
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['secret:database-password' as Binding])] })).toThrow(
      /Unknown binding secret:database-password/,
    );
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['queue:Nowhere'])] })).toThrow(
      /No shared queue with id Nowhere/,
    );
  });
});

describe('observability', () => {
  it('alarms when messages arrive in any dead-letter queue or stream failure queue (the count rising), in the stack that holds the queue', () => {
    const stacks = [
      { template: main.root, names: main.rootNames, resources: main.rootResources },
      ...[...main.views.values()].map((view) => ({ template: view.template, names: view.names, resources: view.resources })),
    ];
    const alarmed: string[] = [];
    for (const { template, names, resources } of stacks) {
      for (const [queueId, queue] of Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::SQS::Queue')) {
        if (queue.Properties.RedrivePolicy) continue;
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          Metrics: [
            Match.objectLike({ Expression: 'DIFF(visible)', ReturnData: true }),
            Match.objectLike({
              Id: 'visible',
              ReturnData: false,
              MetricStat: Match.objectLike({
                Metric: {
                  Namespace: 'AWS/SQS',
                  MetricName: 'ApproximateNumberOfMessagesVisible',
                  Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
                },
                Stat: 'Maximum',
              }),
            }),
          ],
          ComparisonOperator: 'GreaterThanThreshold',
          Threshold: 0,
          EvaluationPeriods: 1,
        });
        alarmed.push(names.get(queueId) as string);
      }
    }

    expect(alarmed.sort()).toEqual(
      [
        ...[...queues.map((queue) => queue.id), ...eventSubscribers.map((subscriber) => subscriber.id)].map(
          (queueId) => `${queueId} dead-letter queue`,
        ),
        ...streamConsumers.map((consumer) => `${consumer.id}Failures queue`),
      ].sort(),
    );
    // No alarm on "any message" any more: it would stay in alarm for 14 days and never notify again.
    const allAlarms = [...stacks.flatMap(({ template }) => Object.values(template.findResources('AWS::CloudWatch::Alarm')))];
    expect(allAlarms.filter((alarm) => alarm.Properties.MetricName === 'ApproximateNumberOfMessagesVisible')).toEqual([]);
  });

  it.each(areas)('$id area: an error alarm per function and a failed-executions alarm per state machine, in its own stack', (area) => {
    const view = viewOf(area.id);
    const dimension = (namespace: string, metricName: string) =>
      Object.values(
        view.template.findResources('AWS::CloudWatch::Alarm', { Properties: { Namespace: namespace, MetricName: metricName } }),
      ).map((alarm) => render(view, (alarm.Properties.Dimensions as Array<{ Value: unknown }>)[0]?.Value));

    expect(dimension('AWS/Lambda', 'Errors').sort()).toEqual(
      functionsOf(area)
        .map((entry) => `<${entry.id} function>`)
        .sort(),
    );
    expect(dimension('AWS/States', 'ExecutionsFailed')).toEqual(
      (area.stateMachines ?? []).map((machine) => `<${machine.id} state machine>`),
    );
    view.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it.each(areas)('$id area: one composite alarm, without actions, over every alarm of the area', (area) => {
    const view = viewOf(area.id);
    const composites = Object.values(view.template.findResources('AWS::CloudWatch::CompositeAlarm'));
    const alarms = Object.keys(view.template.findResources('AWS::CloudWatch::Alarm'));

    expect(composites).toHaveLength(1);
    expect(composites[0]?.Properties).toMatchObject({ ActionsEnabled: false });
    expect(composites[0]?.Properties.AlarmActions).toBeUndefined();
    expect(alarms.length).toBeGreaterThan(0);
    expect(new Set(referencedIds(composites[0]?.Properties.AlarmRule))).toEqual(new Set(alarms));
  });

  it('notifies the alarm topic from every alarm of every stack, when it fires and when it recovers', () => {
    const alarms = [
      ...Object.values(main.root.findResources('AWS::CloudWatch::Alarm')).map((alarm) =>
        renderWith(main.rootNames, [alarm.Properties.AlarmActions, alarm.Properties.OKActions]),
      ),
      ...resourcesOfType('AWS::CloudWatch::Alarm').map(({ view, resource }) =>
        render(view, [resource.Properties.AlarmActions, resource.Properties.OKActions]),
      ),
    ];

    expect(alarms.length).toBe(
      functionEntries.length +
        // failed and timed-out executions
        2 * stateMachines.length +
        // dead letters arriving and the oldest message's age
        2 * (queues.length + eventSubscribers.length) +
        // failed batches arriving and the iterator age
        2 * streamConsumers.length +
        // 5xx, p99 latency, WebSocket integration errors, Lambda throttles, account concurrency, table throttles,
        // event topic delivery failures, events publish failures, webhook deliveries failed
        9,
    );
    expect(new Set(alarms)).toEqual(new Set(['[[<alarm topic>], [<alarm topic>]]']));
  });

  it('alarms on the HTTP API 5xx rate', () => {
    main.root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('errors / requests') }),
        Match.objectLike({ MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: '5xx' }) }) }),
      ]),
      Threshold: 5,
    });
  });

  it('alarms on any webhook_delivery_failed in five minutes (namespace Chat, dimension service)', () => {
    const source = readFileSync(path.join(functionsDir, 'domain/webhooks/deliveries.ts'), 'utf8');
    expect(source).toContain(`WEBHOOK_FAILED_METRIC = '${webhookDeliveryFailedMetricName}'`);

    main.root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Chat',
      MetricName: 'webhook_delivery_failed',
      Dimensions: [{ Name: 'service', Value: defaultServiceName }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    const services = resourcesOfType('AWS::Lambda::Function').map(
      ({ resource }) => resource.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME,
    );
    expect(new Set(services)).toEqual(new Set([defaultServiceName]));
  });

  it('sends alarms to a KMS-encrypted SNS topic that requires TLS', () => {
    const topicId = [...main.rootNames].find(([, name]) => name === 'alarm topic')?.[0];

    expect(renderWith(main.rootNames, main.rootResources[topicId as string]?.Properties.KmsMasterKeyId)).toMatch(/^<.+>\.Arn$/);
    main.root.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  it('has a dashboard with API, Lambda, DynamoDB and queue metrics, a section per area and the status of each area', () => {
    const dashboards = Object.values(main.root.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = dashboards[0]?.Properties.DashboardBody;
    const text = JSON.stringify(body);

    for (const metric of [
      '5xx',
      'Latency',
      'Errors',
      'Duration',
      'Throttles',
      'ConsumedReadCapacityUnits',
      'ConsumedWriteCapacityUnits',
      'ReadThrottleEvents',
      'WriteThrottleEvents',
      'ApproximateNumberOfMessagesVisible',
      'ConnectCount',
      'webhook_delivery_failed',
      'ExecutionsStarted',
      'ExecutionsFailed',
    ]) {
      expect(text, metric).toContain(`\\"${metric}\\"`);
    }
    for (const view of main.views.values()) {
      expect(text, view.area.id).toContain(`## ${view.area.id}`);
      const composite = Object.keys(view.template.findResources('AWS::CloudWatch::CompositeAlarm'))[0];
      const carried = getAttsOf(body)
        .filter(([id]) => id === view.stackResourceId)
        .map((getAtt) => nestedOutput({ 'Fn::GetAtt': getAtt }).value);
      expect(carried, view.area.id).toContainEqual({ 'Fn::GetAtt': [composite, 'Arn'] });
    }
  });
});

describe('configuration', () => {
  /** Functions bound to provider hosts: the real wiring table binds none yet. */
  const providerProbe: Area = {
    id: 'ProviderProbe',
    summary: 'Functions bound to provider hosts',
    httpRoutes: (['fcm', 'apns', 'ai'] as const).map((host) => ({
      id: `Probe${pascalCase(host)}`,
      method: 'POST' as const,
      path: `/probe/${host}`,
      handler: 'http/health/get-health.ts',
      auth: 'none' as const,
      bindings: [`outbound:${host}` as const],
      summary: `Calls ${host}`,
    })),
  };
  const contextSecrets = {
    operatorKey: 'context-operator-key-4f1b9c2e7a',
    CHAT_OPERATOR_KEY: 'chat-operator-key-8d3e6a0b5c',
    WEBHOOK_SECRET_ENCRYPTION_KEY: 'ab'.repeat(32),
  };
  const overrides = {
    rateLimitMessagesPerMinute: 30,
    logLevel: 'DEBUG',
    streamReservedConcurrency: 25,
    aiReservedConcurrency: 10,
    providerUrls: { [outboundHosts.fcm.setting]: 'http://127.0.0.1:4010' },
  } satisfies Partial<ChatConfig>;
  const configured = resolveChatConfig(overrides);
  const entries = [...areas, providerProbe].flatMap(functionsOf);
  let synth: Synthesized;

  beforeAll(() => {
    synth = synthesize({ nagChecks: false, config: overrides, areas: [...areas, providerProbe] }, contextSecrets);
  }, 120_000);

  it('passes the settings, and provider URLs to the functions bound to their host only, to every function of every area', () => {
    const functions = resourcesOfType('AWS::Lambda::Function', synth);

    expect(functions).toHaveLength(entries.length);
    for (const entry of entries) {
      const view = viewOf(entry.area, synth);
      expect(environmentOf(view, functionIdIn(view, entry.id)), entry.id).toEqual(expectedEnvironment(entry, configured));
    }
    // The configured host, the real host by default, and nothing for a provider without one.
    const probe = viewOf('ProviderProbe', synth);
    expect(environmentOf(probe, functionIdIn(probe, 'ProbeFcm')).FCM_BASE_URL).toBe('http://127.0.0.1:4010');
    expect(environmentOf(probe, functionIdIn(probe, 'ProbeApns')).APNS_BASE_URL).toBe('https://api.push.apple.com');
    expect(Object.keys(environmentOf(probe, functionIdIn(probe, 'ProbeAi')))).not.toContain('AI_BASE_URL');
    const bound = functions.filter(({ resource }) => 'FCM_BASE_URL' in resource.Properties.Environment.Variables);
    expect(bound.map(({ view, id }) => view.names.get(id)).sort()).toEqual(
      [
        'ProbeFcm function',
        ...functionEntries.filter((entry) => entry.bindings.includes('outbound:fcm')).map((entry) => `${entry.id} function`),
      ].sort(),
    );
  });

  it('reserves streamReservedConcurrency executions for each streaming route, aiReservedConcurrency for each AI route, no other', () => {
    const reserved = resourcesOfType('AWS::Lambda::Function', synth)
      .filter(({ resource }) => resource.Properties.ReservedConcurrentExecutions !== undefined)
      .map(({ view, id, resource }) => `${view.names.get(id)}: ${resource.Properties.ReservedConcurrentExecutions}`);
    const aiRoutes = httpRoutes.filter((route) => route.bindings.includes('outbound:ai') && route.transport !== 'functionUrl');

    expect(aiRoutes.map((route) => route.id).sort()).toEqual(['InvokeAgent', 'StartRoomHandoff', 'SuggestReplies', 'SummarizeThread']);
    expect(reserved.sort()).toEqual(
      [
        ...streamingRoutes.map((route) => `${route.id} function: 25`),
        ...aiRoutes.map((route) => `${route.id} function: 10`),
        // The probe areas' AI-bound route is an HTTP route too.
        'ProbeAi function: 10',
      ].sort(),
    );
  });

  it('puts no secret value in any template, even one set in context', () => {
    const files = templateFiles(synth.outdir);

    expect([...files.keys()].filter((file) => file.endsWith('.nested.template.json'))).toHaveLength(areas.length + 1);
    for (const [file, text] of [...files, ...templateFiles(main.outdir)]) {
      for (const forbidden of [
        ...Object.values(contextSecrets),
        '{{resolve:secretsmanager',
        ...Object.values(secretDefinitions).map((definition) => definition.setting),
      ]) {
        expect(text.includes(forbidden), `${file} contains ${forbidden}`).toBe(false);
      }
    }
  });

  it('rejects a reservation or provider URL the functions could not use', () => {
    expect(() => resolveChatConfig({ streamReservedConcurrency: 0 })).toThrow(/streamReservedConcurrency must be an integer of at least 5/);
    expect(() => resolveChatConfig({ vapidSubject: 'push@example.com' })).toThrow(/vapidSubject must begin with mailto: or https:\/\//);
    expect(() => resolveChatConfig({ pushEnvironment: 'prod env' })).toThrow(/pushEnvironment must be/);
    expect(() => resolveChatConfig({ providerUrls: { FCM_BASE_URL: 'fcm.googleapis.com' } })).toThrow(
      /FCM_BASE_URL must be an http\(s\) URL/,
    );
  });
});
