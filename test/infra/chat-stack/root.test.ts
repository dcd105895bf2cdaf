import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { areas, eventSubscribers, functionEntries, logSubscribers, queues, stateMachines, streamConsumers, webSocketRoutes } from '#wiring';
import { secretDefinitions, UNSET_SECRET_PLACEHOLDER } from '#wiring/bindings';
import { tableSchema } from '#wiring/table';
import { webSocketStageName } from '../../../lib/constructs/chat-apis.ts';
import { defaultServiceName, functionsDir } from '../../../lib/constructs/chat-function.ts';
import { webhookDeliveryFailedMetricName } from '../../../lib/constructs/chat-observability.ts';
import { corsAllowHeaders } from '../../../lib/cors.ts';
import { sseUrlOutputId } from '../../../lib/stacks/chat-stack.ts';
import { answeredFrames, apiRouteCases, callbackUrl, streamingRoutes } from '../../support/chat-stack/expectations.ts';
import {
  getAttsOf,
  nestedOutput,
  pascalCase,
  queueNamed,
  type Resource,
  referencedIds,
  render,
  renderWith,
  resourcesOfType,
  type Synthesized,
  secretIds,
  synthesizedApp,
  viewOf,
} from '../../support/chat-stack/synthesized.ts';

/**
 * The root stack of the synthesized app and what holds across every stack: the shared resources
 * (table, queues, APIs, secrets, outputs, dashboard and alarm topic), the API routes and function URLs
 * of all areas together, log retention and the alarms. Each area's own stack is checked by its file
 * in this folder (`describeAreaStack`); a new area of the wiring table needs one.
 */

let main: Synthesized;

beforeAll(() => {
  main = synthesizedApp();
}, 120_000);

describe('the chat-stack suite', () => {
  it('has a file per area of the wiring table, each describing its own area', () => {
    const files = readdirSync(import.meta.dirname).filter((file) => file.endsWith('.test.ts'));

    for (const area of areas) {
      const file = `${area.id.toLowerCase()}.test.ts`;
      expect(files, area.id).toContain(file);
      expect(readFileSync(path.join(import.meta.dirname, file), 'utf8'), file).toContain(`describeAreaStack('${area.id}')`);
    }
  });
});

describe('stacks', () => {
  it('keep the shared resources in the root, with one nested stack per area, no route, and no function or role but the log subscribers', () => {
    const types = new Set(Object.values(main.rootResources).map((resource) => resource.Type));

    // One more: ConsoleSite, the deploy-time copy of the console build behind the edge distribution.
    main.root.resourceCountIs('AWS::CloudFormation::Stack', areas.length + 1);
    expect([...main.views.keys()]).toEqual(areas.map((area) => area.id));
    for (const type of ['AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Integration']) {
      expect(types.has(type), type).toBe(false);
    }
    // Every area's log groups send to the log subscribers, so they are the root's (docs/architecture.md "Stacks").
    const subscribers = logSubscribers.length;
    main.root.resourceCountIs('AWS::Lambda::Function', subscribers);
    main.root.resourceCountIs('AWS::IAM::Role', subscribers);
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
        // Retry-After too: the SDK in a page on another site waits as a 429 says.
        ExposeHeaders: ['Retry-After', 'X-Trace-Id'],
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
    // Every module of the HTTP handlers, and of the edge whose middlewares authenticate them.
    const sources = ['http', 'edge'].flatMap((folder) =>
      readdirSync(path.join(functionsDir, folder), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => path.join(functionsDir, folder, file)),
    );
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

describe('function URLs', () => {
  it('exist for the functionUrl routes only, take signed requests only (AWS_IAM), and nobody may invoke a function at large', () => {
    const urls = resourcesOfType('AWS::Lambda::Url');
    const publicPermissions = [
      ...resourcesOfType('AWS::Lambda::Permission'),
      ...Object.values(main.root.findResources('AWS::Lambda::Permission')),
    ]
      .map((found) => ('resource' in found ? found.resource : found))
      .filter((resource) => resource.Properties.Principal === '*');

    main.root.resourceCountIs('AWS::Lambda::Url', 0);
    expect(urls.map(({ view, resource }) => render(view, resource.Properties.TargetFunctionArn)).sort()).toEqual(
      streamingRoutes.map((route) => `<${route.id} function>.Arn`).sort(),
    );
    // Who may call them instead, CloudFront through origin access control: test/infra/chat-stack/edge.test.ts.
    expect(urls.map(({ resource }) => resource.Properties.AuthType)).toEqual(urls.map(() => 'AWS_IAM'));
    expect(publicPermissions).toEqual([]);
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
    AttachmentsBucketName: { text: '<attachments bucket>', type: 'AWS::S3::Bucket' },
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
        // The edge distribution's (test/infra/chat-stack/edge.test.ts).
        'BaseUrl',
        'DistributionDomainName',
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
        // event topic delivery failures, events publish failures, webhook deliveries failed, push failures
        10,
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
      // webhook and push failure rates, WebSocket latency, Lambda concurrency
      'webhook_delivered',
      'push_failed',
      'IntegrationLatency',
      'ConcurrentExecutions',
      'ClaimedAccountConcurrency',
      'MessageCount',
      '4xx',
      'ApproximateAgeOfOldestMessage',
      'ExecutionsStarted',
      'ExecutionsFailed',
    ]) {
      expect(text, metric).toContain(`\\"${metric}\\"`);
    }
    for (const title of ['HTTP API latency', 'WebSocket API latency', 'Webhook deliveries', 'Push notifications', 'Lambda concurrency']) {
      expect(text, title).toContain(title);
    }
    expect(text).toContain('p50');
    expect(text).toContain('failure rate %');
    expect(text).toContain('push failures %');
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
