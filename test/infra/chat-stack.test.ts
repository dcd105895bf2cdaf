import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AttributeType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { config as handlerConfig } from '../../functions/shared/config.ts';
import { streamCorsAllowHeaders, streamingRouteTimeout } from '../../lib/constructs/chat-apis.ts';
import {
  assertMaxConcurrencyInRange,
  assertVisibilityExceedsTimeout,
  sqsMaxConcurrencyRange,
} from '../../lib/constructs/chat-consumers.ts';
import {
  ChatFunction,
  defaultServiceName,
  functionsDir,
  repoRoot,
  webhookSecretEncryptionKeyEnv,
  webhookSecretsModule,
} from '../../lib/constructs/chat-function.ts';
import { webhookDeliveryFailedMetricName } from '../../lib/constructs/chat-observability.ts';
import { bundlesModule } from '../../lib/constructs/handler-modules.ts';
import { loadDefinition } from '../../lib/local/step-functions.ts';
import { type Access, httpRoutes, queueConsumers, queues, stateMachines, webSocketRoutes } from '../../lib/routes.ts';
import { type ChatAppOptions, createChatApp } from '../../lib/stacks/chat-app.ts';
import { sseUrlOutputId } from '../../lib/stacks/chat-stack.ts';
import { resourceEnv, tableSchema } from '../../lib/table.ts';

/**
 * Template assertions on the synthesized stack. Bundling is skipped (`aws:cdk:bundling-stacks: []`)
 * to keep this file fast; `cdk-synth-cli.test.ts` bundles every handler for real.
 */

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

/** An app as `cdk synth` builds it (feature flags from cdk.json), without bundling. */
function newApp(): App {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  return new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-infra-')),
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] },
  });
}

/** Synthesizes the app as `cdk synth` would, without bundling. */
function synthesize(options: ChatAppOptions = {}): Template {
  const { stack } = createChatApp(newApp(), options);
  return Template.fromStack(stack);
}

const routeCases = [
  ...httpRoutes.map((route) => ({
    id: route.id,
    routeKey: `${route.method} ${route.path}`,
    protocol: 'HTTP',
    transport: route.transport ?? 'httpApi',
    access: route.access,
  })),
  ...webSocketRoutes.map((route) => ({
    id: route.id,
    routeKey: route.routeKey,
    protocol: 'WEBSOCKET',
    transport: 'webSocketApi',
    access: route.access,
  })),
];
/** HTTP routes served from a Lambda function URL (response streaming) instead of the HTTP API. */
const streamingRoutes = httpRoutes.filter((route) => route.transport === 'functionUrl');
/** Routes API Gateway serves: every WebSocket route and the HTTP routes on the HTTP API. */
const apiRouteCases = routeCases.filter((route) => route.transport !== 'functionUrl');

/** Every function the wiring table asks for: routes, queue consumers and state machine tasks. */
const functionCases = [
  ...routeCases.map((route) => ({
    ...route,
    kind: 'route' as const,
    timeoutSeconds: route.transport === 'functionUrl' ? streamingRouteTimeout.toSeconds() : 10,
  })),
  ...queueConsumers.map((consumer) => ({
    id: consumer.id,
    kind: 'consumer' as const,
    access: consumer.access,
    timeoutSeconds: consumer.timeoutSeconds,
  })),
  ...stateMachines.flatMap((machine) =>
    machine.tasks.map((task) => ({ id: task.id, kind: 'task' as const, access: task.access, timeoutSeconds: task.timeoutSeconds })),
  ),
];
const handlerOf = new Map<string, string>(
  [...httpRoutes, ...webSocketRoutes, ...queueConsumers, ...stateMachines.flatMap((machine) => machine.tasks)].map((entry) => [
    entry.id,
    entry.handler,
  ]),
);

let template: Template;
let resources: Record<string, Resource>;

/** Logical id of the only resource of `type` whose properties match `properties`. */
function logicalIdOf(type: string, properties: Record<string, unknown>): string {
  const found = Object.keys(template.findResources(type, { Properties: properties }));
  expect(found, `${type} matching ${JSON.stringify(properties)}`).toHaveLength(1);
  return found[0] as string;
}

/** Every `Fn::GetAtt` target inside a value. */
function getAttTargets(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(getAttTargets);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const getAtt = record['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
    return Object.values(record).flatMap(getAttTargets);
  }
  return [];
}

/** The Lambda function an API route invokes, followed through route → integration → function. */
function functionOfRoute(routeKey: string, protocol: string): string {
  const apiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: protocol });
  const routeId = logicalIdOf('AWS::ApiGatewayV2::Route', { RouteKey: routeKey, ApiId: { Ref: apiId } });
  const target = JSON.stringify(resources[routeId]?.Properties.Target);
  const integrationId = Object.keys(template.findResources('AWS::ApiGatewayV2::Integration')).find((id) =>
    target.includes(`"Ref":"${id}"`),
  );
  expect(integrationId, `integration of ${routeKey}`).toBeDefined();
  const targets = getAttTargets(resources[integrationId as string]?.Properties.IntegrationUri).filter(
    (id) => resources[id]?.Type === 'AWS::Lambda::Function',
  );
  expect(targets, `function of ${routeKey}`).toHaveLength(1);
  return targets[0] as string;
}

/** The function URL of a `functionUrl` route and its function, followed through URL → function (by the route in its description). */
function urlOfRoute(routeId: string): { urlId: string; functionId: string } {
  const route = httpRoutes.find((candidate) => candidate.id === routeId);
  const urls = Object.entries(template.findResources('AWS::Lambda::Url')).filter(([, url]) => {
    const [functionId] = getAttTargets(url.Properties.TargetFunctionArn);
    return String(resources[functionId as string]?.Properties.Description).startsWith(`${route?.method} ${route?.path}: `);
  });
  expect(urls, `function URL of ${routeId}`).toHaveLength(1);
  const [urlId, url] = urls[0] as [string, { Properties: { TargetFunctionArn: unknown } }];
  const functionId = getAttTargets(url.Properties.TargetFunctionArn)[0] as string;
  expect(resources[functionId]?.Type).toBe('AWS::Lambda::Function');
  return { urlId, functionId };
}

/** Logical id of a state machine of the wiring table, through the stack output `<id>StateMachineArn`. */
function stateMachineOf(machineId: string): string {
  const outputs = template.toJSON().Outputs as Record<string, { Value: { Ref?: string } }>;
  const ref = outputs[`${machineId}StateMachineArn`]?.Value.Ref;
  expect(resources[ref as string]?.Type, `state machine ${machineId}`).toBe('AWS::StepFunctions::StateMachine');
  return ref as string;
}

/** Logical id of the SQS queue (not dead-letter queue) of a wiring-table queue. */
function queueOf(queueId: string): string {
  const definition = queues.find((candidate) => candidate.id === queueId);
  return logicalIdOf('AWS::SQS::Queue', { VisibilityTimeout: definition?.visibilityTimeoutSeconds, RedrivePolicy: Match.anyValue() });
}

/** The event source mappings of a queue consumer, followed through queue → mapping → function. */
function mappingOfConsumer(consumerId: string): { mappingId: string; functionId: string } {
  const consumer = queueConsumers.find((candidate) => candidate.id === consumerId);
  const queueId = queueOf(consumer?.queue as string);
  const mappings = Object.entries(
    template.findResources('AWS::Lambda::EventSourceMapping', { Properties: { EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] } } }),
  ).filter(([, mapping]) =>
    JSON.stringify(resources[(mapping.Properties.FunctionName as { Ref: string }).Ref]?.Properties.Description).includes(
      consumer?.summary as string,
    ),
  );
  expect(mappings, `event source mapping of ${consumerId}`).toHaveLength(1);
  const [mappingId, mapping] = mappings[0] as [string, { Properties: { FunctionName: { Ref: string } } }];
  return { mappingId, functionId: mapping.Properties.FunctionName.Ref };
}

/** The task function a state machine's definition substitutes for `placeholder`. */
function functionOfTask(machineId: string, placeholder: string): string {
  const substitutions = resources[stateMachineOf(machineId)]?.Properties.DefinitionSubstitutions as Record<string, unknown>;
  const targets = getAttTargets(substitutions[placeholder]);
  expect(targets, `function of ${machineId} ${placeholder}`).toHaveLength(1);
  expect(resources[targets[0] as string]?.Type).toBe('AWS::Lambda::Function');
  return targets[0] as string;
}

/** The Lambda function of any wiring-table entry, found through what invokes it. */
function functionOf(functionCase: (typeof functionCases)[number]): string {
  if ('routeKey' in functionCase) {
    if (functionCase.transport === 'functionUrl') return urlOfRoute(functionCase.id).functionId;
    return functionOfRoute(functionCase.routeKey, functionCase.protocol);
  }
  if (functionCase.kind === 'consumer') return mappingOfConsumer(functionCase.id).functionId;
  const machine = stateMachines.find((candidate) => candidate.tasks.some((task) => task.id === functionCase.id));
  const task = machine?.tasks.find((candidate) => candidate.id === functionCase.id);
  return functionOfTask(machine?.id as string, task?.placeholder as string);
}

/** Actions the function's execution role may perform, with the resources of each statement. */
function permissionsOf(functionId: string): { actions: Set<string>; statements: Array<{ actions: string[]; resource: unknown }> } {
  const roleId = getAttTargets(resources[functionId]?.Properties.Role)[0];
  const statements = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"Ref":"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
    .map((statement) => ({ actions: [statement.Action].flat(), resource: statement.Resource }));
  return { actions: new Set(statements.flatMap((statement) => statement.actions)), statements };
}

/** Logical ids of the queues the function's role may send to. */
function sendTargetsOf(functionId: string): Set<string> {
  return new Set(
    permissionsOf(functionId)
      .statements.filter((statement) => statement.actions.includes('sqs:SendMessage'))
      .flatMap((statement) => getAttTargets(statement.resource)),
  );
}

function environmentOf(functionId: string): Record<string, unknown> {
  const environment = resources[functionId]?.Properties.Environment as { Variables: Record<string, unknown> };
  return environment.Variables;
}

beforeAll(() => {
  template = synthesize();
  resources = template.toJSON().Resources as Record<string, Resource>;
}, 120_000);

describe('table', () => {
  it('is on-demand with TTL, point-in-time recovery, deletion protection and AWS-managed encryption', () => {
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
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
            DeletionProtectionEnabled: true,
          }),
        ],
      }),
    });
  });

  it('has exactly the global secondary indexes of lib/table.ts, string keys, all attributes projected', () => {
    const table = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'))[0] as Resource;
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
  it.each(queues)('$id redrives to its dead-letter queue after maxReceiveCount receives', (definition) => {
    const queueIds = Object.keys(
      template.findResources('AWS::SQS::Queue', {
        Properties: { VisibilityTimeout: definition.visibilityTimeoutSeconds, RedrivePolicy: Match.anyValue() },
      }),
    );
    expect(queueIds).toHaveLength(1);
    const queue = resources[queueIds[0] as string] as Resource;
    const redrive = queue.Properties.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: number };
    const [deadLetterId] = getAttTargets(redrive.deadLetterTargetArn);

    expect(redrive.maxReceiveCount).toBe(definition.maxReceiveCount);
    expect(resources[deadLetterId as string]?.Type).toBe('AWS::SQS::Queue');
  });

  it('encrypts every queue with SQS-managed keys and denies requests without TLS', () => {
    const all = template.findResources('AWS::SQS::Queue');
    expect(Object.values(all).map((queue) => queue.Properties.SqsManagedSseEnabled)).toEqual(Object.keys(all).map(() => true));
    for (const queueId of Object.keys(all)) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queueId }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
  });
});

describe('APIs', () => {
  it('has an HTTP API with CORS for the service headers, access logs and throttling on $default', () => {
    const apiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({
        AllowHeaders: Match.arrayWith(['Authorization', 'Content-Type', 'X-Service-Api-Key', 'X-Service-Operator-Key', 'X-Trace-Id']),
      }),
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
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

  it('has a WebSocket API with the $connect, $disconnect and $default routes on an auto-deployed prod stage', () => {
    const apiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    for (const routeKey of ['$connect', '$disconnect', '$default']) {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { ApiId: { Ref: apiId }, RouteKey: routeKey });
    }
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { ApiId: { Ref: apiId }, StageName: 'prod', AutoDeploy: true });
  });

  it('has one API route per WebSocket route and HTTP API route of lib/routes.ts, and no other', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Route', apiRouteCases.length);
  });

  it.each(routeCases.filter((route) => route.protocol === 'HTTP'))('serves $routeKey on its transport ($transport)', (route) => {
    const apiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    const apiRoutes = Object.keys(
      template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: route.routeKey, ApiId: { Ref: apiId } } }),
    );

    if (route.transport === 'functionUrl') {
      expect(apiRoutes).toEqual([]);
      expect(urlOfRoute(route.id).functionId).toBeDefined();
    } else {
      expect(apiRoutes).toHaveLength(1);
      const functionId = functionOfRoute(route.routeKey, route.protocol);
      expect(
        Object.values(template.findResources('AWS::Lambda::Url')).filter(
          (url) => getAttTargets(url.Properties.TargetFunctionArn)[0] === functionId,
        ),
      ).toEqual([]);
    }
  });

  it('has exactly one function per HTTP route, WebSocket route, queue consumer and state machine task, and no helper functions', () => {
    const wired = functionCases.map(functionOf);

    expect(functionCases).toHaveLength(
      httpRoutes.length + webSocketRoutes.length + queueConsumers.length + stateMachines.flatMap((m) => m.tasks).length,
    );
    expect(new Set(wired).size).toBe(functionCases.length);
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).sort()).toEqual([...wired].sort());
  });
});

describe.each(functionCases)('function $id ($kind)', (functionCase) => {
  const { access, timeoutSeconds } = functionCase;
  const has = (entry: Access) => access.includes(entry);

  it('runs the handler with the function defaults', () => {
    const functionId = functionOf(functionCase);
    const properties = resources[functionId]?.Properties as Record<string, unknown>;
    const logGroupId = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

    expect(properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: timeoutSeconds,
      TracingConfig: { Mode: 'Active' },
    });
    expect(environmentOf(functionId)).toMatchObject({
      NODE_OPTIONS: '--enable-source-maps',
      POWERTOOLS_SERVICE_NAME: 'chat',
      LOG_LEVEL: 'INFO',
      RATE_LIMIT_MESSAGES_PER_MINUTE: '120',
    });
    expect(resources[logGroupId]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
  });

  it('gets exactly the grants and environment its access list names', () => {
    const functionId = functionOf(functionCase);
    const { actions } = permissionsOf(functionId);
    const environment = environmentOf(functionId);

    expect(actions.has('dynamodb:GetItem') && actions.has('dynamodb:Query')).toBe(has('table:read'));
    for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
      expect(actions.has(write), write).toBe(has('table:write'));
    }
    expect(actions.has('sqs:SendMessage')).toBe(has('events:send') || has('realtime:send'));
    // Sending reaches exactly the queues the access list names, each through its own variable.
    const sendTargets = sendTargetsOf(functionId);
    expect(sendTargets.has(queueOf('Events')), 'sends to the Events queue').toBe(has('events:send'));
    expect(sendTargets.has(queueOf('Realtime')), 'sends to the Realtime queue').toBe(has('realtime:send'));
    // A queue consumer's event source may also receive, delete and hide messages of its own queue.
    const sqsAllowed = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'].concat(
      functionCase.kind === 'consumer' ? ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'] : [],
    );
    expect([...actions].filter((action) => action.startsWith('sqs:') && !sqsAllowed.includes(action))).toEqual([]);
    expect(actions.has('execute-api:ManageConnections')).toBe(has('connections:manage'));
    expect([...actions].filter((action) => action.startsWith('states:'))).toEqual(has('webhooks:start') ? ['states:StartExecution'] : []);
    expect([...actions].filter((action) => action.startsWith('secretsmanager:') || action.startsWith('lambda:'))).toEqual([]);
    expect(resourceEnv.table in environment).toBe(has('table:read') || has('table:write'));
    expect(resourceEnv.eventsQueue in environment).toBe(has('events:send'));
    expect(resourceEnv.realtimeQueue in environment).toBe(has('realtime:send'));
    expect(resourceEnv.connectionsEndpoint in environment).toBe(has('connections:manage'));
    expect(resourceEnv.webhookStateMachine in environment).toBe(has('webhooks:start'));
    expect(webhookSecretEncryptionKeyEnv in environment).toBe(
      bundlesModule(handlerOf.get(functionCase.id) as string, webhookSecretsModule),
    );
    expect('CHAT_OPERATOR_KEY' in environment).toBe(false);
  });
});

describe('least privilege', () => {
  it('gives a read-only route (ListRooms) no write, queue or connection permission', () => {
    const { actions } = permissionsOf(functionOfRoute('GET /rooms', 'HTTP'));

    expect(actions).toContain('dynamodb:Query');
    expect([...actions].filter((action) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(action))).toEqual([]);
    expect([...actions].filter((action) => action.startsWith('sqs:') || action.startsWith('execute-api:'))).toEqual([]);
  });

  it('lets CreateMessage send to the events and realtime queues and post to connections of the prod stage only', () => {
    const functionId = functionOfRoute('POST /messages', 'HTTP');
    const { statements } = permissionsOf(functionId);
    const wsApiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });

    const send = statements.filter((statement) => statement.actions.includes('sqs:SendMessage'));
    const manage = statements.find((statement) => statement.actions.includes('execute-api:ManageConnections'));
    expect(send.flatMap((statement) => [statement.resource].flat())).toEqual(
      expect.arrayContaining([{ 'Fn::GetAtt': [queueOf('Events'), 'Arn'] }, { 'Fn::GetAtt': [queueOf('Realtime'), 'Arn'] }]),
    );
    expect(send.flatMap((statement) => [statement.resource].flat())).toHaveLength(2);
    expect(environmentOf(functionId)).toMatchObject({
      [resourceEnv.eventsQueue]: { Ref: queueOf('Events') },
      [resourceEnv.realtimeQueue]: { Ref: queueOf('Realtime') },
    });
    expect(JSON.stringify(manage?.resource)).toContain(`{"Ref":"${wsApiId}"},"/prod/*/@connections/*"`);
    expect(JSON.stringify(environmentOf(functionId)[resourceEnv.connectionsEndpoint])).toMatch(/"https:\/\/".*\/prod"/);
  });

  it('lets exactly the connections:manage functions, queue consumers included, post to connections of the prod stage', () => {
    const wsApiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    const managers = Object.keys(template.findResources('AWS::Lambda::Function')).filter((functionId) =>
      permissionsOf(functionId).actions.has('execute-api:ManageConnections'),
    );
    const expected = functionCases.filter((functionCase) => functionCase.access.includes('connections:manage'));
    const consumers = queueConsumers.filter((consumer) => consumer.access.includes('connections:manage'));

    expect(consumers.map((consumer) => consumer.id)).toEqual(expect.arrayContaining(['EventsDispatcher', 'RealtimeWorker']));
    expect(managers.sort()).toEqual(expected.map(functionOf).sort());
    expect(managers).toEqual(expect.arrayContaining(consumers.map((consumer) => mappingOfConsumer(consumer.id).functionId)));
    for (const functionId of managers) {
      const manage = permissionsOf(functionId).statements.filter((statement) =>
        statement.actions.some((action) => action.startsWith('execute-api:')),
      );
      expect(manage.map((statement) => statement.actions)).toEqual([['execute-api:ManageConnections']]);
      expect(JSON.stringify(manage[0]?.resource)).toContain(`{"Ref":"${wsApiId}"},"/prod/*/@connections/*"`);
      // The stage's callback URL: https://<api>.execute-api.<region>.<suffix>/prod
      const endpoint = JSON.stringify(environmentOf(functionId)[resourceEnv.connectionsEndpoint]);
      expect(endpoint).toContain(`{"Ref":"${wsApiId}"}`);
      expect(endpoint).toMatch(/"https:\/\/".*\/prod"/);
    }
  });

  it('gives a route without events:send (CreateRoom) no SQS permission at all', () => {
    const { actions } = permissionsOf(functionOfRoute('POST /rooms', 'HTTP'));

    expect([...actions].filter((action) => action.startsWith('sqs:'))).toEqual([]);
  });

  it('uses no managed policies: each role writes only to its own log group', () => {
    const roles = Object.values(template.findResources('AWS::IAM::Role'));

    expect(roles.filter((role) => role.Properties.ManagedPolicyArns !== undefined)).toEqual([]);
  });

  it('grants no wildcard resource except X-Ray and state machine log delivery (neither has resource-level permissions)', () => {
    const stateMachineRoles = new Set(
      stateMachines.map((machine) => getAttTargets(resources[stateMachineOf(machine.id)]?.Properties.RoleArn)[0] as string),
    );
    const starredActions = (forStateMachines: boolean) =>
      new Set(
        Object.values(template.findResources('AWS::IAM::Policy'))
          .filter(
            (policy) =>
              [...stateMachineRoles].some((roleId) => JSON.stringify(policy.Properties.Roles).includes(`"Ref":"${roleId}"`)) ===
              forStateMachines,
          )
          .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
          .filter((statement) => [statement.Resource].flat().includes('*'))
          .flatMap((statement) => [statement.Action].flat()),
      );

    expect(starredActions(false)).toEqual(new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    expect(starredActions(true)).toEqual(
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
  });

  it('lets only the webhooks:start functions (the events dispatcher and the replay route) start the retry state machine', () => {
    const machineId = stateMachineOf('WebhookRetry');
    const starters = Object.keys(template.findResources('AWS::Lambda::Function')).filter((functionId) =>
      permissionsOf(functionId).actions.has('states:StartExecution'),
    );
    const expected = functionCases.filter((functionCase) => functionCase.access.includes('webhooks:start')).map(functionOf);

    expect(expected).toEqual(
      expect.arrayContaining([
        mappingOfConsumer('EventsDispatcher').functionId,
        functionOfRoute('POST /admin/webhooks/deliveries/{deliveryId}/replay', 'HTTP'),
      ]),
    );
    expect(starters.sort()).toEqual([...expected].sort());
    for (const functionId of starters) {
      const start = permissionsOf(functionId).statements.filter((statement) =>
        statement.actions.some((action) => action.startsWith('states:')),
      );
      expect(start).toEqual([{ actions: ['states:StartExecution'], resource: { Ref: machineId } }]);
      expect(environmentOf(functionId)[resourceEnv.webhookStateMachine]).toEqual({ Ref: machineId });
    }
    // No other role either: the state machine's own role only invokes its tasks.
    const otherStarters = Object.values(template.findResources('AWS::IAM::Policy'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[] }>)
      .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('states:')));
    expect(otherStarters).toHaveLength(starters.length);
  });
});

describe('logs', () => {
  it('keeps every log group (functions, HTTP access logs, state machine executions) for one month', () => {
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));

    expect(groups.length).toBe(functionCases.length + 1 + stateMachines.length);
    expect(groups.map((group) => group.Properties.RetentionInDays)).toEqual(groups.map(() => 30));
  });
});

describe.each(stateMachines)('state machine $id', (machine) => {
  const fileText = () => readFileSync(path.join(repoRoot, machine.definitionFile), 'utf8');

  it('is a Standard state machine that logs every event without execution data, and is traced', () => {
    const properties = resources[stateMachineOf(machine.id)]?.Properties as Record<string, unknown>;
    const logGroupId = getAttTargets(properties.LoggingConfiguration)[0] as string;

    expect(properties).toMatchObject({
      StateMachineType: 'STANDARD',
      LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      TracingConfiguration: { Enabled: true },
    });
    expect(resources[logGroupId]).toMatchObject({
      Type: 'AWS::Logs::LogGroup',
      Properties: { LogGroupName: `/aws/vendedlogs/states/chat-dev-${machine.id}`, RetentionInDays: 30 },
    });
  });

  it('deploys the ASL file verbatim, each task placeholder substituted by its task function ARN', () => {
    const properties = resources[stateMachineOf(machine.id)]?.Properties as Record<string, unknown>;

    expect(properties.DefinitionString).toBe(fileText());
    expect(JSON.parse(properties.DefinitionString as string)).toEqual(JSON.parse(fileText()));
    expect(properties.DefinitionSubstitutions).toEqual(
      Object.fromEntries(
        machine.tasks.map((task) => [task.placeholder, { 'Fn::GetAtt': [functionOfTask(machine.id, task.placeholder), 'Arn'] }]),
      ),
    );
    expect(properties.DefinitionS3Location).toBeUndefined();
  });

  it('is the definition the local interpreter runs (lib/local/step-functions.ts loadDefinition)', () => {
    const properties = resources[stateMachineOf(machine.id)]?.Properties as Record<string, unknown>;
    const standInArn = (taskId: string) => `arn:aws:lambda:eu-west-1:123456789012:function:${taskId}`;
    const taskIdOfFunction = new Map(machine.tasks.map((task) => [functionOfTask(machine.id, task.placeholder), task.id]));

    // What CloudFormation deploys: DefinitionString with every ${key} of DefinitionSubstitutions replaced.
    let deployed = properties.DefinitionString as string;
    for (const [key, value] of Object.entries(properties.DefinitionSubstitutions as Record<string, unknown>)) {
      deployed = deployed.replaceAll(`\${${key}}`, standInArn(taskIdOfFunction.get(getAttTargets(value)[0] as string) as string));
    }

    expect(deployed).not.toContain('${');
    expect(JSON.parse(deployed)).toEqual(loadDefinition(repoRoot, machine, standInArn));
  });

  it('may invoke exactly its task functions, and nothing else', () => {
    const roleId = getAttTargets(resources[stateMachineOf(machine.id)]?.Properties.RoleArn)[0];
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"Ref":"${roleId}"`))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
      .filter((statement) => [statement.Resource].flat().some((resource) => resource !== '*'));

    expect(statements).toHaveLength(1);
    expect(statements[0]?.Action).toBe('lambda:InvokeFunction');
    expect(new Set(getAttTargets(statements[0]?.Resource))).toEqual(
      new Set(machine.tasks.map((task) => functionOfTask(machine.id, task.placeholder))),
    );
  });
});

describe.each(queueConsumers)('queue consumer $id', (consumer) => {
  it('reads its queue in batches of batchSize, maxConcurrency batches at once, with partial batch responses and no batching window', () => {
    const { mappingId, functionId } = mappingOfConsumer(consumer.id);
    const mapping = resources[mappingId]?.Properties as Record<string, unknown>;

    expect(mapping).toMatchObject({
      BatchSize: consumer.batchSize,
      ScalingConfig: { MaximumConcurrency: consumer.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(mapping.MaximumBatchingWindowInSeconds).toBeUndefined();
    expect(mapping.Enabled ?? true).toBe(true);
    expect(resources[functionId]?.Properties.Timeout).toBe(consumer.timeoutSeconds);
  });

  it('has a queue whose visibility timeout exceeds the function timeout, and a dead-letter queue', () => {
    const { functionId } = mappingOfConsumer(consumer.id);
    const queue = resources[queueOf(consumer.queue)]?.Properties as {
      VisibilityTimeout: number;
      RedrivePolicy: { deadLetterTargetArn: unknown };
    };
    const timeout = resources[functionId]?.Properties.Timeout as number;

    expect(queue.VisibilityTimeout).toBeGreaterThan(timeout);
    expect(resources[getAttTargets(queue.RedrivePolicy.deadLetterTargetArn)[0] as string]?.Type).toBe('AWS::SQS::Queue');
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

describe.each(streamingRoutes)('streaming route $id ($method $path)', (route) => {
  it('has a function URL in RESPONSE_STREAM mode, auth type NONE, with CORS for its method, Authorization and Last-Event-ID', () => {
    const { urlId, functionId } = urlOfRoute(route.id);
    const properties = resources[urlId]?.Properties as Record<string, unknown>;

    expect(properties).toMatchObject({
      AuthType: 'NONE',
      InvokeMode: 'RESPONSE_STREAM',
      TargetFunctionArn: { 'Fn::GetAtt': [functionId, 'Arn'] },
      Cors: {
        AllowMethods: [route.method],
        AllowOrigins: ['*'],
        AllowHeaders: expect.arrayContaining(['Authorization', 'Last-Event-ID']),
      },
    });
    expect((properties.Cors as { AllowHeaders: string[] }).AllowHeaders).toEqual([...streamCorsAllowHeaders]);
    expect(properties.Qualifier).toBeUndefined();
  });

  it('may be invoked by anyone through its URL only (the handler verifies the JWT itself)', () => {
    const { functionId } = urlOfRoute(route.id);
    const permissions = Object.values(
      template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: { 'Fn::GetAtt': [functionId, 'Arn'] } } }),
    ).map((permission) => permission.Properties);

    expect(permissions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 'lambda:InvokeFunctionUrl', Principal: '*', FunctionUrlAuthType: 'NONE' }),
        expect.objectContaining({ Action: 'lambda:InvokeFunction', Principal: '*', InvokedViaFunctionUrl: true }),
      ]),
    );
    // A public invoke permission always goes with a function URL, never alone.
    expect(
      permissions.filter(
        (permission) => permission.Principal === '*' && !permission.FunctionUrlAuthType && !permission.InvokedViaFunctionUrl,
      ),
    ).toEqual([]);
  });

  it("runs up to Lambda's 15 minutes, longer than a stream lasts (SSE_MAX_DURATION_SECONDS)", () => {
    const { functionId } = urlOfRoute(route.id);

    expect(resources[functionId]?.Properties.Timeout).toBe(900);
    expect(handlerConfig.SSE_MAX_DURATION_SECONDS).toBeLessThan(streamingRouteTimeout.toSeconds());
  });

  it('is a stack output (SseUrl) carrying the function URL', () => {
    const { urlId } = urlOfRoute(route.id);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(outputs[sseUrlOutputId(route.id, streamingRoutes.length)]?.Value).toEqual({ 'Fn::GetAtt': [urlId, 'FunctionUrl'] });
  });
});

describe('function URLs', () => {
  it('exist for the functionUrl routes only, and only they may be invoked by anyone', () => {
    template.resourceCountIs('AWS::Lambda::Url', streamingRoutes.length);
    const publicTargets = Object.values(template.findResources('AWS::Lambda::Permission', { Properties: { Principal: '*' } })).map(
      (permission) => getAttTargets(permission.Properties.FunctionName)[0],
    );

    expect(new Set(publicTargets)).toEqual(new Set(streamingRoutes.map((route) => urlOfRoute(route.id).functionId)));
  });

  it('are output as SseUrl while there is one streaming route, as <RouteId>SseUrl each once there are several', () => {
    const outputs = Object.keys(template.toJSON().Outputs as object);

    expect(sseUrlOutputId('StreamRoom', 1)).toBe('SseUrl');
    expect(sseUrlOutputId('StreamRoom', 2)).toBe('StreamRoomSseUrl');
    expect(outputs.filter((output) => output.endsWith('SseUrl'))).toHaveLength(streamingRoutes.length);
    if (streamingRoutes.length === 1) expect(outputs).toContain('SseUrl');
  });
});

describe('outputs', () => {
  it.each(queues)('has the URLs of the $id queue and its dead-letter queue', (definition) => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const queueId = queueOf(definition.id);
    const redrive = resources[queueId]?.Properties.RedrivePolicy as { deadLetterTargetArn: unknown };

    expect(outputs[`${definition.id}QueueUrl`]?.Value).toEqual({ Ref: queueId });
    expect(outputs[`${definition.id}DeadLetterQueueUrl`]?.Value).toEqual({ Ref: getAttTargets(redrive.deadLetterTargetArn)[0] });
  });
});

describe('webhook secret encryption key', () => {
  it('is generated by Secrets Manager as exactly 64 hex characters and retained like the table', () => {
    const secretId = logicalIdOf('AWS::SecretsManager::Secret', {});
    const secret = resources[secretId] as Resource;
    const generate = secret.Properties.GenerateSecretString as {
      PasswordLength: number;
      ExcludeCharacters: string;
      ExcludePunctuation: boolean;
      ExcludeUppercase: boolean;
      ExcludeLowercase?: boolean;
      ExcludeNumbers?: boolean;
      IncludeSpace: boolean;
      SecretStringTemplate?: string;
    };
    // Secrets Manager's alphabet: letters, digits and this punctuation (GetRandomPassword).
    const punctuation = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
    const alphabet = [
      ...(generate.ExcludeUppercase ? [] : 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
      ...(generate.ExcludeLowercase ? [] : 'abcdefghijklmnopqrstuvwxyz'),
      ...(generate.ExcludeNumbers ? [] : '0123456789'),
      ...(generate.ExcludePunctuation ? [] : punctuation),
      ...(generate.IncludeSpace ? [' '] : []),
    ].filter((character) => !generate.ExcludeCharacters.includes(character));

    expect(alphabet.sort().join('')).toBe('0123456789abcdef');
    expect(generate.PasswordLength).toBe(64);
    expect(generate.SecretStringTemplate).toBeUndefined();
    expect(secret).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('reaches exactly the functions whose handler bundles the secrets module, as a dynamic reference', () => {
    const secretId = logicalIdOf('AWS::SecretsManager::Secret', {});
    const keyed = functionCases.filter((functionCase) => webhookSecretEncryptionKeyEnv in environmentOf(functionOf(functionCase)));

    expect(keyed.map((functionCase) => functionCase.id)).toEqual(
      expect.arrayContaining(['RegisterWebhook', 'VerifyWebhook', 'EventsDispatcher', 'WebhookAttempt']),
    );
    expect(keyed.map((functionCase) => functionCase.id)).not.toContain('CreateMessage');
    for (const functionCase of keyed) {
      expect(environmentOf(functionOf(functionCase))[webhookSecretEncryptionKeyEnv]).toEqual({
        'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
      });
    }
  });
});

describe('ChatFunction.grantAccess', () => {
  it('fails the synth for webhooks:start without a webhook state machine, as for connections:manage without a stage', () => {
    const stack = new Stack(newApp(), 'Bare');
    const table = new TableV2(stack, 'Table', { partitionKey: { name: 'pk', type: AttributeType.STRING } });
    const eventsQueue = new Queue(stack, 'Queue');
    const realtimeQueue = new Queue(stack, 'RealtimeQueue');
    const fn = new ChatFunction(stack, 'Starter', { handlerPath: 'http/webhooks/replay-delivery.ts' });

    expect(() => fn.grantAccess(['webhooks:start'], { table, eventsQueue, realtimeQueue })).toThrow(
      /needs webhooks:start but no webhook state machine/,
    );
    expect(() => fn.grantAccess(['connections:manage'], { table, eventsQueue, realtimeQueue })).toThrow(/needs connections:manage/);
  });
});

describe('observability', () => {
  it('alarms on any message in a dead-letter queue, the dead-letter queue of every queue of lib/routes.ts included', () => {
    const deadLetterIds = Object.keys(template.findResources('AWS::SQS::Queue', { Properties: { MessageRetentionPeriod: 1_209_600 } }));
    expect(deadLetterIds).toHaveLength(queues.length);
    for (const definition of queues) {
      const redrive = resources[queueOf(definition.id)]?.Properties.RedrivePolicy as { deadLetterTargetArn: unknown };
      expect(deadLetterIds, definition.id).toContain(getAttTargets(redrive.deadLetterTargetArn)[0]);
    }
    for (const deadLetterId of deadLetterIds) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        AlarmActions: [{ Ref: Match.anyValue() }],
      });
    }
  });

  it('alarms on the HTTP API 5xx rate and on errors of every function', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('errors / requests') }),
        Match.objectLike({ MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: '5xx' }) }) }),
      ]),
      Threshold: 5,
    });
    const errorAlarms = template.findResources('AWS::CloudWatch::Alarm', {
      Properties: { Namespace: 'AWS/Lambda', MetricName: 'Errors' },
    });
    const alarmedFunctions = Object.values(errorAlarms).map(
      (alarm) => (alarm.Properties.Dimensions as Array<{ Value: { Ref: string } }>)[0]?.Value.Ref,
    );
    expect(alarmedFunctions.sort()).toEqual(Object.keys(template.findResources('AWS::Lambda::Function')).sort());
  });

  it('alarms on any webhook_delivery_failed in five minutes (namespace Chat, dimension service)', () => {
    const source = readFileSync(path.join(functionsDir, 'domain/webhooks/deliveries.ts'), 'utf8');
    expect(source).toContain(`WEBHOOK_FAILED_METRIC = '${webhookDeliveryFailedMetricName}'`);

    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Chat',
      MetricName: 'webhook_delivery_failed',
      Dimensions: [{ Name: 'service', Value: defaultServiceName }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: Match.anyValue() }],
    });
    const services = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (fn) => (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_SERVICE_NAME,
    );
    expect(new Set(services)).toEqual(new Set([defaultServiceName]));
  });

  it.each(stateMachines)('alarms on failed executions of the $id state machine', (machine) => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/States',
      MetricName: 'ExecutionsFailed',
      Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: stateMachineOf(machine.id) } }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [{ Ref: Match.anyValue() }],
    });
  });

  it('sends alarms to a KMS-encrypted SNS topic that requires TLS', () => {
    const topicId = logicalIdOf('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.every((alarm) => JSON.stringify(alarm.Properties.AlarmActions) === JSON.stringify([{ Ref: topicId }]))).toBe(true);
  });

  it('has a dashboard with API, Lambda, DynamoDB and queue metrics', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]?.Properties.DashboardBody);

    for (const metric of [
      '5xx',
      'Latency',
      'Errors',
      'Duration',
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
      expect(body, metric).toContain(`\\"${metric}\\"`);
    }
  });
});

describe('configuration', () => {
  it('passes CHAT_OPERATOR_KEY and other settings to every function when configured', () => {
    // Prepare / Act
    const configured = synthesize({
      config: { operatorKey: 'an-operator-key-of-32-characters', rateLimitMessagesPerMinute: 30, logLevel: 'DEBUG' },
    });

    // Assess
    const functions = Object.values(configured.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(functionCases.length);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        CHAT_OPERATOR_KEY: 'an-operator-key-of-32-characters',
        RATE_LIMIT_MESSAGES_PER_MINUTE: '30',
        LOG_LEVEL: 'DEBUG',
      });
    }
  }, 120_000);

  it('rejects an operator key the handlers would reject at cold start', () => {
    expect(() => synthesize({ config: { operatorKey: 'short' } })).toThrow(/at least 16 characters/);
  });
});
