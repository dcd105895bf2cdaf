import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { expect } from 'vitest';
import { type Area, eventSubscribers, type FunctionEntry, functionEntries, queues } from '#wiring';
import { type SecretId, secretDefinitions } from '#wiring/bindings';
import { repoRoot } from '../../../lib/constructs/chat-function.ts';
import { isSubscriberEnabled } from '../../../lib/event-subscriptions.ts';
import type { AreaStack } from '../../../lib/stacks/area-stack.ts';
import { type ChatAppOptions, createChatApp } from '../../../lib/stacks/chat-app.ts';
import type { ChatStack } from '../../../lib/stacks/chat-stack.ts';

/**
 * The synthesized chat app as the chat-stack suite (`test/infra/chat-stack/`) reads it: the root
 * stack and its nested area stacks, synthesized once per worker and shared by every file of the suite.
 * Bundling is skipped (`aws:cdk:bundling-stacks: []`) to keep the suite fast; `cdk-synth-cli.test.ts`
 * bundles every handler for real.
 *
 * A nested template names the root's resources through its Parameters (`referencetoChatdev...`),
 * whose values the root gives on the `AWS::CloudFormation::Stack` resource; the helpers below follow
 * them back, and render every reference as `<name>` (a `Ref`) or `<name>.Attribute` (a `Fn::GetAtt`),
 * the names coming from the stack outputs and the wiring table, so that a grant reads
 * `sqs:SendMessage on <Realtime queue>.Arn` whichever stack it is in.
 */

export type Resource = {
  Type: string;
  Properties: Record<string, any>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
export type TemplateJson = {
  Parameters?: Record<string, unknown>;
  Resources: Record<string, Resource>;
  Outputs?: Record<string, { Value: unknown }>;
};

/** One area's nested stack as the tests see it. */
export interface AreaView {
  readonly area: Area;
  /** The area's nested stack; for a log subscriber's view ({@link viewOfFunction}), the root. */
  readonly stack: Pick<AreaStack, 'functions' | 'getLogicalId'>;
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

export interface Synthesized {
  readonly stack: ChatStack;
  readonly outdir: string;
  readonly root: Template;
  readonly rootResources: Record<string, Resource>;
  readonly outputs: Record<string, { Value: unknown }>;
  readonly rootNames: ReadonlyMap<string, string>;
  readonly views: ReadonlyMap<string, AreaView>;
  /** The log subscribers' functions, which the root builds (lib/constructs/chat-log-subscribers.ts), seen as an area of the root. */
  readonly logSubscriberViews: ReadonlyMap<string, AreaView>;
}

/** An app as `cdk synth` builds it (feature flags from cdk.json), without bundling. */
export function newApp(context: Record<string, unknown> = {}): App {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  return new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-infra-')),
    context: { ...cdkJson.context, ...context, 'aws:cdk:bundling-stacks': [] },
  });
}

export const pascalCase = (id: string) => id.replace(/(^|-)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
export const secretIds = Object.keys(secretDefinitions) as SecretId[];

/** The logical ids a value refers to (`Ref` and `Fn::GetAtt`). */
export function referencedIds(value: unknown): string[] {
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
export function getAttsOf(value: unknown): Array<[string, string]> {
  if (Array.isArray(value)) return value.flatMap(getAttsOf);
  if (value && typeof value === 'object') {
    const getAtt = (value as Record<string, unknown>)['Fn::GetAtt'];
    if (Array.isArray(getAtt)) return [getAtt as [string, string]];
    return Object.values(value).flatMap(getAttsOf);
  }
  return [];
}

/** The single logical id a `{ Ref }` or `{ Fn::GetAtt }` names. */
export function idOf(value: unknown): string {
  const ids = referencedIds(value);
  expect(ids, JSON.stringify(value)).toHaveLength(1);
  return ids[0] as string;
}

/** `value` with every reference to one of the area's parameters replaced by what the root passes in. */
export function inRoot(view: AreaView, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => inRoot(view, item));
  if (value && typeof value === 'object') {
    const ref = (value as { Ref?: unknown }).Ref;
    if (typeof ref === 'string' && ref in view.parameterValues) return view.parameterValues[ref];
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inRoot(view, item)]));
  }
  return value;
}

/** A template value as text: `<name>` for a `Ref`, `<name>.Attribute` for a `Fn::GetAtt`, joins joined. */
export function renderWith(names: ReadonlyMap<string, string>, value: unknown): string {
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
export const render = (view: AreaView, value: unknown) => renderWith(view.names, inRoot(view, value));

/** The function of a wiring-table entry: the logical id of its `ChatFunction` in its area's template. */
export function functionIdIn(view: AreaView, functionId: string): string {
  const fn = view.stack.functions.get(functionId);
  expect(fn, `function ${functionId} of ${view.area.id}`).toBeDefined();
  return view.stack.getLogicalId(fn?.node.defaultChild as CfnElement);
}

/** Names of the root's shared resources, found through the stack outputs. */
export function rootNamesOf(json: TemplateJson, root: Template): Map<string, string> {
  const outputs = json.Outputs ?? {};
  const output = (name: string) => idOf(outputs[name]?.Value);
  const names = new Map<string, string>([
    [output('TableName'), 'table'],
    [output('EventTopicArn'), 'event topic'],
    [idOf(json.Resources[output('EventTopicArn')]?.Properties.KmsMasterKeyId), 'event topic key'],
    [output('AlarmTopicArn'), 'alarm topic'],
    [output('DashboardName'), 'dashboard'],
  ]);
  // Absent with attachmentsEnabled=false.
  if (outputs.AttachmentsBucketName) names.set(output('AttachmentsBucketName'), 'attachments bucket');
  for (const queue of queues) {
    names.set(output(`${queue.id}QueueUrl`), `${queue.id} queue`);
    names.set(output(`${queue.id}DeadLetterQueueUrl`), `${queue.id} dead-letter queue`);
  }
  // A deployment without the edge distribution has no origin-verify secret.
  for (const secretId of secretIds) {
    if (outputs[`${pascalCase(secretId)}SecretArn`]) names.set(output(`${pascalCase(secretId)}SecretArn`), `${secretId} secret`);
  }
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
export function synthesize(options: ChatAppOptions = {}, context: Record<string, unknown> = {}): Synthesized {
  const app = newApp(context);
  const { stack } = createChatApp(app, options);
  const root = Template.fromStack(stack);
  const rootJson = root.toJSON() as TemplateJson;
  const rootNames = rootNamesOf(rootJson, root);
  for (const [functionId, fn] of stack.logSubscribers.functions) {
    const logicalId = stack.getLogicalId(fn.node.defaultChild as CfnElement);
    rootNames.set(logicalId, `${functionId} function`);
    rootNames.set(idOf(rootJson.Resources[logicalId]?.Properties.LoggingConfig.LogGroup), `${functionId} log group`);
    rootNames.set(stack.getLogicalId(fn.executionRole.node.defaultChild as CfnElement), `${functionId} role`);
  }
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
  const logSubscriberViews = new Map<string, AreaView>();
  for (const [areaId, areaStack] of stack.areas) {
    if (!areaStack.area.logSubscribers?.length) continue;
    const names = new Map(rootNames);
    logSubscriberViews.set(areaId, {
      area: areaStack.area,
      stack: { functions: stack.logSubscribers.functions, getLogicalId: (element: CfnElement) => stack.getLogicalId(element) },
      template: root,
      resources: rootJson.Resources,
      outputs: rootJson.Outputs ?? {},
      parameters: [],
      stackResourceId: '',
      parameterValues: {},
      names,
    });
  }
  return {
    stack,
    logSubscriberViews,
    outdir: app.outdir,
    root,
    rootResources: rootJson.Resources,
    outputs: rootJson.Outputs ?? {},
    rootNames,
    views,
  };
}

/** Every template file of a synthesized assembly (root and nested), as text. */
export function templateFiles(outdir: string): Map<string, string> {
  return new Map(
    readdirSync(outdir)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => [file, readFileSync(path.join(outdir, file), 'utf8')]),
  );
}

let shared: Synthesized | undefined;

/**
 * The shared app's context beyond cdk.json: an AI base URL, so the subscribers that exist only with
 * AI (`requiresSetting`) are there to check with the rest; `test/infra/subscriber-filters.test.ts`
 * synthesizes without it and finds them gone.
 */
export const SHARED_SYNTH_CONTEXT = { AI_BASE_URL: 'https://ai.example.test/v1' } as const;

/**
 * The app as `cdk synth` builds it by default, synthesized on first use and then shared by every file
 * of the suite that runs in the same worker, so that a file per area does not mean a synth per area.
 */
export function synthesizedApp(): Synthesized {
  shared ??= synthesize({}, SHARED_SYNTH_CONTEXT);
  return shared;
}

export const viewOf = (areaId: string, synth: Synthesized = synthesizedApp()): AreaView => {
  const view = synth.views.get(areaId);
  expect(view, `nested stack of area ${areaId}`).toBeDefined();
  return view as AreaView;
};
/** Where a function of the table is: its area's nested stack, or the root for a log subscriber. */
export const viewOfFunction = (entry: FunctionEntry, synth: Synthesized = synthesizedApp()): AreaView => {
  if (entry.kind !== 'logSubscriber') return viewOf(entry.area, synth);
  const view = synth.logSubscriberViews.get(entry.area);
  expect(view, `log subscribers of area ${entry.area}`).toBeDefined();
  return view as AreaView;
};
export const functionOf = (entry: FunctionEntry) => functionIdIn(viewOfFunction(entry), entry.id);
/**
 * Whether an app synthesized with these provider URLs has the function: an event subscriber whose
 * feature they leave off (`requiresSetting`, no `AI_BASE_URL`) is not created.
 */
export function isDeployedWith(entry: FunctionEntry, providerUrls: Readonly<Record<string, string>> = {}): boolean {
  const subscriber = entry.kind === 'eventSubscriber' ? eventSubscribers.find((candidate) => candidate.id === entry.id) : undefined;
  return !subscriber || isSubscriberEnabled(subscriber, providerUrls);
}

export const entryOf = (functionId: string) => functionEntries.find((entry) => entry.id === functionId) as FunctionEntry;

/** Every area view with its resources of `type`. */
export function resourcesOfType(
  type: string,
  synth: Synthesized = synthesizedApp(),
): Array<{ view: AreaView; id: string; resource: Resource }> {
  return [...synth.views.values()].flatMap((view) =>
    Object.entries(view.resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id, resource]) => ({ view, id, resource })),
  );
}

/** The IAM statements of a role of an area, as `<action> on <resource>` (inline policies and attached `AWS::IAM::Policy`s). */
export function grantsOfRole(view: AreaView, roleId: string): string[] {
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

export const roleOfFunction = (view: AreaView, functionLogicalId: string) => idOf(view.resources[functionLogicalId]?.Properties.Role);
export const grantsOf = (entry: FunctionEntry) =>
  grantsOfRole(viewOfFunction(entry), roleOfFunction(viewOfFunction(entry), functionOf(entry)));

/** Every function of every area whose role may perform `action`, by wiring-table id. */
export function functionsAllowedTo(action: string, synth: Synthesized = synthesizedApp()): Map<string, string[]> {
  const allowed = new Map<string, string[]>();
  for (const { view, id } of resourcesOfType('AWS::Lambda::Function', synth)) {
    const grants = grantsOfRole(view, roleOfFunction(view, id)).filter((grant) => grant.startsWith(`${action} on `));
    if (grants.length > 0) allowed.set((view.names.get(id) as string).replace(/ function$/, ''), grants);
  }
  return allowed;
}

/** A function's environment, rendered. */
export function environmentOf(view: AreaView, functionLogicalId: string): Record<string, string> {
  const variables = (view.resources[functionLogicalId]?.Properties.Environment?.Variables ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, render(view, value)]));
}

/** The function an API route of an area invokes, followed through route → integration → function. */
export function functionOfRoute(view: AreaView, routeKey: string, api: 'HTTP API' | 'WebSocket API'): string {
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
export function urlOfRoute(view: AreaView, routeId: string): string {
  const functionId = functionIdIn(view, routeId);
  const urls = Object.entries(view.resources).filter(
    ([, resource]) => resource.Type === 'AWS::Lambda::Url' && idOf(resource.Properties.TargetFunctionArn) === functionId,
  );
  expect(urls, `function URL of ${routeId}`).toHaveLength(1);
  return (urls[0] as [string, Resource])[0];
}

/** The area-template value a root output carries from a nested stack (`Fn::GetAtt: [<nested stack>, Outputs.X]`). */
export function nestedOutput(value: unknown, synth: Synthesized = synthesizedApp()): { view: AreaView; value: unknown } {
  const [stackResourceId, attribute] = (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
  const view = [...synth.views.values()].find((candidate) => candidate.stackResourceId === stackResourceId);
  expect(view, `nested stack ${stackResourceId}`).toBeDefined();
  expect(attribute).toMatch(/^Outputs\./);
  const output = (view as AreaView).outputs[attribute.slice('Outputs.'.length)];
  expect(output, attribute).toBeDefined();
  return { view: view as AreaView, value: output?.Value };
}

/** The area and logical id of a state machine of the wiring table, through the root output `<id>StateMachineArn`. */
export function stateMachineOf(machineId: string): { view: AreaView; id: string } {
  const { view, value } = nestedOutput(synthesizedApp().outputs[`${machineId}StateMachineArn`]?.Value);
  const id = idOf(value);
  expect(view.resources[id]?.Type, `state machine ${machineId}`).toBe('AWS::StepFunctions::StateMachine');
  return { view, id };
}

/** The event source mapping feeding a function. */
export function mappingOf(view: AreaView, functionLogicalId: string): Record<string, any> {
  const mappings = Object.values(view.resources).filter(
    (resource) => resource.Type === 'AWS::Lambda::EventSourceMapping' && idOf(resource.Properties.FunctionName) === functionLogicalId,
  );
  expect(mappings, `event source mapping of ${view.names.get(functionLogicalId)}`).toHaveLength(1);
  return (mappings[0] as Resource).Properties;
}

/** A queue's properties, by its rendered name (`<Realtime queue>`) in the root or an area. */
export function queueNamed(name: string, view?: AreaView): Record<string, any> {
  const main = synthesizedApp();
  const entries = view ? Object.entries(view.resources) : Object.entries(main.rootResources);
  const names = view ? view.names : main.rootNames;
  const found = entries.filter(([id, resource]) => resource.Type === 'AWS::SQS::Queue' && `<${names.get(id)}>` === name);
  expect(found, name).toHaveLength(1);
  return (found[0] as [string, Resource])[1].Properties;
}
