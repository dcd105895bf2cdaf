import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionsDir, repoRoot } from '../../lib/constructs/chat-function.ts';
import { type Access, httpRoutes, queues, webSocketRoutes } from '../../lib/routes.ts';
import { type ChatAppOptions, createChatApp } from '../../lib/stacks/chat-app.ts';
import { resourceEnv, tableSchema } from '../../lib/table.ts';

/**
 * Template assertions on the synthesized stack. Bundling is skipped (`aws:cdk:bundling-stacks: []`)
 * to keep this file fast; `cdk-synth-cli.test.ts` bundles every handler for real.
 */

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };

/** Synthesizes the app as `cdk synth` would (feature flags from cdk.json), without bundling. */
function synthesize(options: ChatAppOptions = {}): Template {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  const app = new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-infra-')),
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] },
  });
  const { stack } = createChatApp(app, options);
  return Template.fromStack(stack);
}

const routeCases = [
  ...httpRoutes.map((route) => ({
    id: route.id,
    routeKey: `${route.method} ${route.path}`,
    protocol: 'HTTP',
    access: route.access,
  })),
  ...webSocketRoutes.map((route) => ({
    id: route.id,
    routeKey: route.routeKey,
    protocol: 'WEBSOCKET',
    access: route.access,
  })),
];

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

/** Actions the function's execution role may perform, with the resources of each statement. */
function permissionsOf(functionId: string): { actions: Set<string>; statements: Array<{ actions: string[]; resource: unknown }> } {
  const roleId = getAttTargets(resources[functionId]?.Properties.Role)[0];
  const statements = Object.values(template.findResources('AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"Ref":"${roleId}"`))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>)
    .map((statement) => ({ actions: [statement.Action].flat(), resource: statement.Resource }));
  return { actions: new Set(statements.flatMap((statement) => statement.actions)), statements };
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

  it('has one API route per route of lib/routes.ts and no other', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Route', routeCases.length);
  });

  it('has exactly one function per route, and no helper functions (log groups are explicit)', () => {
    const wired = routeCases.map((route) => functionOfRoute(route.routeKey, route.protocol));

    expect(new Set(wired).size).toBe(routeCases.length);
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).sort()).toEqual([...wired].sort());
  });
});

describe.each(routeCases)('route $routeKey ($id)', ({ routeKey, protocol, access }) => {
  const has = (entry: Access) => access.includes(entry);

  it('runs the handler with the function defaults', () => {
    const functionId = functionOfRoute(routeKey, protocol);
    const properties = resources[functionId]?.Properties as Record<string, unknown>;
    const logGroupId = (properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

    expect(properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: 512,
      Timeout: 10,
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
    const functionId = functionOfRoute(routeKey, protocol);
    const { actions } = permissionsOf(functionId);
    const environment = environmentOf(functionId);

    expect(actions.has('dynamodb:GetItem') && actions.has('dynamodb:Query')).toBe(has('table:read'));
    for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
      expect(actions.has(write), write).toBe(has('table:write'));
    }
    expect(actions.has('sqs:SendMessage')).toBe(has('events:send'));
    expect(
      [...actions].filter(
        (action) =>
          action.startsWith('sqs:') && action !== 'sqs:GetQueueAttributes' && action !== 'sqs:GetQueueUrl' && action !== 'sqs:SendMessage',
      ),
    ).toEqual([]);
    expect(actions.has('execute-api:ManageConnections')).toBe(has('connections:manage'));
    expect(resourceEnv.table in environment).toBe(has('table:read') || has('table:write'));
    expect(resourceEnv.eventsQueue in environment).toBe(has('events:send'));
    expect(resourceEnv.connectionsEndpoint in environment).toBe(has('connections:manage'));
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

  it('lets CreateMessage send to the events queue and post to connections of the prod stage only', () => {
    const functionId = functionOfRoute('POST /messages', 'HTTP');
    const { statements } = permissionsOf(functionId);
    const queueId = Object.keys(template.findResources('AWS::SQS::Queue', { Properties: { RedrivePolicy: Match.anyValue() } }))[0];
    const wsApiId = logicalIdOf('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });

    const send = statements.find((statement) => statement.actions.includes('sqs:SendMessage'));
    const manage = statements.find((statement) => statement.actions.includes('execute-api:ManageConnections'));
    expect(send?.resource).toEqual({ 'Fn::GetAtt': [queueId, 'Arn'] });
    expect(JSON.stringify(manage?.resource)).toContain(`{"Ref":"${wsApiId}"},"/prod/*/@connections/*"`);
    expect(JSON.stringify(environmentOf(functionId)[resourceEnv.connectionsEndpoint])).toMatch(/"https:\/\/".*\/prod"/);
  });

  it('gives a route without events:send (CreateRoom) no SQS permission at all', () => {
    const { actions } = permissionsOf(functionOfRoute('POST /rooms', 'HTTP'));

    expect([...actions].filter((action) => action.startsWith('sqs:'))).toEqual([]);
  });

  it('uses no managed policies: each role writes only to its own log group', () => {
    const roles = Object.values(template.findResources('AWS::IAM::Role'));

    expect(roles.filter((role) => role.Properties.ManagedPolicyArns !== undefined)).toEqual([]);
  });

  it('grants no wildcard resource except X-Ray (which has no resource-level permissions)', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (policy) => policy.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>,
    );
    const starred = statements.filter((statement) => [statement.Resource].flat().includes('*'));

    expect(new Set(starred.flatMap((statement) => [statement.Action].flat()))).toEqual(
      new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
    );
  });
});

describe('logs', () => {
  it('keeps every log group (functions and access logs) for one month', () => {
    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));

    expect(groups.length).toBe(routeCases.length + 1);
    expect(groups.map((group) => group.Properties.RetentionInDays)).toEqual(groups.map(() => 30));
  });
});

describe('observability', () => {
  it('alarms on any message in a dead-letter queue', () => {
    const deadLetterIds = Object.keys(template.findResources('AWS::SQS::Queue', { Properties: { MessageRetentionPeriod: 1_209_600 } }));
    expect(deadLetterIds).toHaveLength(queues.length);
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
    expect(functions).toHaveLength(routeCases.length);
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
