import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { config as handlerConfig } from '#shared/config';
import { areas, functionsOf } from '#wiring';
import { streamingRouteTimeout } from '../../../lib/constructs/chat-apis.ts';
import {
  assertMaxConcurrencyInRange,
  assertVisibilityExceedsTimeout,
  sqsMaxConcurrencyRange,
} from '../../../lib/constructs/chat-consumers.ts';
import { repoRoot } from '../../../lib/constructs/chat-function.ts';
import { streamCorsAllowHeaders } from '../../../lib/cors.ts';
import { filterPolicyOf } from '../../../lib/event-subscriptions.ts';
import { loadDefinition } from '../../../lib/local/step-functions.ts';
import { resolveChatConfig } from '../../../lib/stacks/chat-config.ts';
import { sseUrlOutputId } from '../../../lib/stacks/chat-stack.ts';
import {
  apiRouteCases,
  areaOfRoute,
  evaluate,
  expectedEnvironment,
  expectedGrants,
  on,
  sqsConsumerCases,
  streamingRoutes,
  timeoutOf,
} from './expectations.ts';
import {
  entryOf,
  environmentOf,
  functionIdIn,
  functionOf,
  functionOfRoute,
  grantsOf,
  grantsOfRole,
  idOf,
  mappingOf,
  nestedOutput,
  queueNamed,
  referencedIds,
  render,
  renderWith,
  type Synthesized,
  stateMachineOf,
  synthesizedApp,
  urlOfRoute,
  viewOf,
  viewOfFunction,
} from './synthesized.ts';

/**
 * The checks of one area's nested stack, for `test/infra/chat-stack/<area>.test.ts`: its functions
 * (handler defaults, grants, environment), the API routes it serves, its state machines, queue
 * consumers, event subscribers, stream consumers and streaming routes, and its alarms, each against
 * the area's entries in the wiring table. The root stack and the checks across areas are in
 * `root.test.ts` and `least-privilege.test.ts`.
 */
export function describeAreaStack(areaId: string): void {
  const area = areas.find((candidate) => candidate.id === areaId);
  if (!area) throw new Error(`No area ${areaId} in the wiring table`);
  const ofArea = <T>(items: readonly T[], areaOf: (item: T) => string) => items.filter((item) => areaOf(item) === area.id);
  let main: Synthesized;

  beforeAll(() => {
    main = synthesizedApp();
  }, 120_000);

  describe('stacks', () => {
    it.each([area])('$id holds exactly the functions of its area', (area) => {
      const view = viewOf(area.id);
      const functions = Object.keys(view.template.findResources('AWS::Lambda::Function'));
      // Log subscribers are the root's (lib/constructs/chat-log-subscribers.ts).
      const own = functionsOf(area).filter((entry) => entry.kind !== 'logSubscriber');
      const expected = own.map((entry) => functionIdIn(view, entry.id));

      expect(new Set(expected).size).toBe(own.length);
      expect(functions.sort()).toEqual(expected.sort());
    });

    it.each([area])('$id takes each of its parameters from a resource of the root, never from another area', (area) => {
      const view = viewOf(area.id);
      const sources = Object.values(view.parameterValues).flatMap(referencedIds);

      expect(Object.keys(view.parameterValues).sort()).toEqual([...view.parameters].sort());
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        expect(main.rootResources[source], source).toBeDefined();
        expect(main.rootResources[source]?.Type, source).not.toBe('AWS::CloudFormation::Stack');
      }
      // It waits only for the permission letting CloudWatch Logs invoke the log subscribers its subscription filters name.
      expect(
        [main.rootResources[view.stackResourceId]?.DependsOn ?? []].flat().map((dependency) => main.rootResources[dependency]?.Type),
      ).toEqual(main.stack.logSubscribers.permissions.map(() => 'AWS::Lambda::Permission'));
    });
  });

  const routeCases = ofArea(apiRouteCases, (route) => route.area);
  if (routeCases.length > 0) {
    describe('APIs', () => {
      it.each(routeCases)('serves $routeKey on the $api from the $area stack, invoking its own function', (route) => {
        const view = viewOf(route.area);
        const functionId = functionOfRoute(view, route.routeKey, route.api);

        expect(functionId).toBe(functionIdIn(view, route.id));
        expect(
          Object.values(view.template.findResources('AWS::Lambda::Url')).filter(
            (url) => idOf(url.Properties.TargetFunctionArn) === functionId,
          ),
        ).toEqual([]);
      });
    });
  }

  describe.each(functionsOf(area))('function $id ($kind, $area area)', (entry) => {
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

  describe.each(area.stateMachines ?? [])('state machine $id', (machine) => {
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

  describe.each(ofArea(sqsConsumerCases, (consumer) => entryOf(consumer.id).area))('$kind $id', (consumer) => {
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

  describe.each(area.eventSubscribers ?? [])('event subscriber $id', (subscriber) => {
    const view = () => viewOfFunction(entryOf(subscriber.id));

    it('has its own queue in its area, subscribed to the root event topic with raw delivery and a filter on the event type and its attribute conditions', () => {
      const subscriptions = Object.values(view().template.findResources('AWS::SNS::Subscription')).filter(
        (subscription) => render(view(), subscription.Properties.Endpoint) === `<${subscriber.id} queue>.Arn`,
      );

      expect(subscriptions).toHaveLength(1);
      const properties = subscriptions[0]?.Properties as Record<string, unknown>;
      expect(properties).toMatchObject({ Protocol: 'sqs', RawMessageDelivery: true });
      expect(render(view(), properties.TopicArn)).toBe('<event topic>');
      expect(properties.FilterPolicy).toEqual(filterPolicyOf(subscriber));
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

  describe.each(area.streamConsumers ?? [])('stream consumer $id', (consumer) => {
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

    it('is invoked only for inserted items of its kind: messages and outbox items (the publisher), coalesced messages (hot rooms)', () => {
      const expected = {
        EventPublisher: [{ eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }, { prefix: 'EVT#' }] } } } }],
        RoomDelivery: [
          {
            eventName: ['INSERT'],
            dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }] } }, NewImage: { delivery: { S: ['coalesced'] } } },
          },
        ],
      }[consumer.id];
      expect(consumer.filters).toEqual(expected);
    });
  });

  describe.each(ofArea(streamingRoutes, (route) => areaOfRoute(route.id)))('streaming route $id ($method $path)', (route) => {
    const view = () => viewOf(areaOfRoute(route.id));

    it('has a function URL in RESPONSE_STREAM mode, auth type AWS_IAM (CloudFront signs), with CORS for its method, Authorization and Last-Event-ID', () => {
      const properties = view().resources[urlOfRoute(view(), route.id)]?.Properties as Record<string, unknown>;

      expect(properties).toMatchObject({
        AuthType: 'AWS_IAM',
        InvokeMode: 'RESPONSE_STREAM',
        Cors: {
          AllowMethods: [route.method],
          AllowOrigins: ['*'],
          AllowHeaders: expect.arrayContaining(['Authorization', 'Last-Event-ID']),
        },
      });
      expect((properties.Cors as { AllowHeaders: string[] }).AllowHeaders).toEqual([...streamCorsAllowHeaders]);
      expect(properties.Qualifier).toBeUndefined();
    });

    it('may be invoked by nobody at large: only the edge distribution, through its URL (test/infra/chat-stack/edge.test.ts)', () => {
      const functionId = functionIdIn(view(), route.id);
      const permissions = Object.values(
        view().template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: { 'Fn::GetAtt': [functionId, 'Arn'] } } }),
      ).map((permission) => permission.Properties);

      expect(permissions.filter((permission) => permission.Principal === '*')).toEqual([]);
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

  describe('observability', () => {
    it.each([area])('$id area: an error alarm per function and a failed-executions alarm per state machine, in its own stack', (area) => {
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

    it.each([area])('$id area: one composite alarm, without actions, over every alarm of the area', (area) => {
      const view = viewOf(area.id);
      const composites = Object.values(view.template.findResources('AWS::CloudWatch::CompositeAlarm'));
      const alarms = Object.keys(view.template.findResources('AWS::CloudWatch::Alarm'));

      expect(composites).toHaveLength(1);
      expect(composites[0]?.Properties).toMatchObject({ ActionsEnabled: false });
      expect(composites[0]?.Properties.AlarmActions).toBeUndefined();
      expect(alarms.length).toBeGreaterThan(0);
      expect(new Set(referencedIds(composites[0]?.Properties.AlarmRule))).toEqual(new Set(alarms));
    });
  });
}
