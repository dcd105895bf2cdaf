import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { areas, eventSubscribers, queues, stateMachines, streamConsumers } from '#wiring';
import { EVENTS_PUBLISH_FAILED_METRIC } from '../../functions/domain/events/publisher.ts';
import { alarmCost, alarmPrices, metricsOfAlarm } from '../../lib/constructs/alarm-cost.ts';
import { streamRetryPolicy } from '../../lib/constructs/chat-consumers.ts';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import {
  eventsPublishFailedMetricName,
  iteratorAgeAlarmSeconds,
  pushFailedMetricName,
  pushFailureAlarmMinimum,
  pushFailureAlarmPercent,
  pushSentMetricName,
  queueAgeAlarmSeconds,
  throttlesAlarmThreshold,
} from '../../lib/constructs/chat-observability.ts';
import { isSubscriberEnabled } from '../../lib/event-subscriptions.ts';
import { synthesizeStacks, type TemplateJson } from '../support/area-projection.ts';

/**
 * The alarms that make a stall or a failure page someone, read from the synthesized templates
 * (bundling skipped): each names its metric, statistic, threshold and the alarm topic.
 */

const { stacks } = synthesizeStacks({ areas });
const root = Template.fromJSON(stacks[0]?.template as unknown as Record<string, unknown>);
const areaTemplate = (areaId: string) => {
  const stack = stacks.find((candidate) => candidate.name === areaId);
  if (!stack) throw new Error(`no stack ${areaId}`);
  return Template.fromJSON(stack.template as unknown as Record<string, unknown>);
};
const alarmTopic = Match.arrayWith([Match.objectLike({ Ref: Match.stringLikeRegexp('AlarmTopic') })]);

describe('the event pipeline', () => {
  it('retries a failing stream batch a bounded number of times, bisecting it, then notes it in the failure queue', () => {
    expect(streamRetryPolicy).toMatchObject({ retryAttempts: 10, bisectBatchOnError: true });
    expect(streamRetryPolicy.maxRecordAge.toSeconds()).toBe(3600);
    for (const consumer of streamConsumers) {
      const area = areas.find((candidate) => candidate.streamConsumers?.includes(consumer));
      areaTemplate(area?.id ?? '').hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        MaximumRetryAttempts: 10,
        MaximumRecordAgeInSeconds: 3600,
        BisectBatchOnFunctionError: true,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
      });
    }
    expect(streamConsumers.map((consumer) => consumer.id).sort()).toEqual(['EventPublisher', 'RoomDelivery']);
  });

  it(`pages when a stream consumer falls ${iteratorAgeAlarmSeconds / 60} minutes behind (IteratorAge, Maximum)`, () => {
    const template = areaTemplate('Events');
    const [functionId] = Object.keys(template.findResources('AWS::Lambda::Function'));
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionId } }],
      Statistic: 'Maximum',
      Threshold: iteratorAgeAlarmSeconds * 1000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: alarmTopic,
    });
  });

  it('pages on any stream record the publisher hands back unpublished (events_publish_failed)', () => {
    expect(EVENTS_PUBLISH_FAILED_METRIC).toBe(eventsPublishFailedMetricName);
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Chat',
      MetricName: 'events_publish_failed',
      Dimensions: [{ Name: 'service', Value: 'chat' }],
      Statistic: 'Sum',
      Threshold: 1,
      AlarmActions: alarmTopic,
    });
  });

  it('pages when the event topic fails to deliver to a queue', () => {
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SNS',
      MetricName: 'NumberOfNotificationsFailed',
      Dimensions: [{ Name: 'TopicName', Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('EventTopic'), 'TopicName'] } }],
      Threshold: 1,
      AlarmActions: alarmTopic,
    });
  });
});

describe('capacity', () => {
  it(`pages on Lambda throttles account-wide (${throttlesAlarmThreshold} in five minutes, 2 of 3)`, () => {
    const alarms = root.findResources('AWS::CloudWatch::Alarm', { Properties: { Namespace: 'AWS/Lambda', MetricName: 'Throttles' } });
    const [alarm] = Object.values(alarms);

    expect(Object.keys(alarms)).toHaveLength(1);
    expect(alarm?.Properties).toMatchObject({
      Statistic: 'Sum',
      Threshold: throttlesAlarmThreshold,
      DatapointsToAlarm: 2,
      EvaluationPeriods: 3,
    });
    expect(alarm?.Properties.Dimensions).toBeUndefined();
  });

  it('pages when claimed account concurrency nears the quota (accountConcurrencyAlarmThreshold)', () => {
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'ClaimedAccountConcurrency',
      Statistic: 'Maximum',
      Threshold: 800,
      Dimensions: Match.absent(),
      AlarmActions: alarmTopic,
    });
    Template.fromJSON(
      synthesizeStacks({ areas, config: { accountConcurrencyAlarmThreshold: 40 } }).stacks[0]?.template as unknown as Record<
        string,
        unknown
      >,
    ).hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ClaimedAccountConcurrency', Threshold: 40 });
  });

  it('pages on DynamoDB read or write throttles of the table', () => {
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'reads + writes' }),
        Match.objectLike({ Id: 'reads', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'ReadThrottleEvents' }) }) }),
        Match.objectLike({
          Id: 'writes',
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'WriteThrottleEvents' }) }),
        }),
      ]),
      Threshold: 1,
      AlarmActions: alarmTopic,
    });
  });

  it(`pages when a working queue's oldest message waited ${queueAgeAlarmSeconds / 60} minutes, for every queue with a consumer`, () => {
    const ageAlarms = stacks.flatMap(({ template }) =>
      Object.values(template.Resources).filter(
        (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && resource.Properties?.MetricName === 'ApproximateAgeOfOldestMessage',
      ),
    );

    // The default synth has no AI base URL, so the subscribers that need it have no queue (lib/event-subscriptions.ts).
    expect(ageAlarms).toHaveLength(queues.length + eventSubscribers.filter((subscriber) => isSubscriberEnabled(subscriber, {})).length);
    for (const alarm of ageAlarms) expect(alarm.Properties).toMatchObject({ Statistic: 'Maximum', Threshold: queueAgeAlarmSeconds });
  });
});

describe('the APIs', () => {
  it('page on HTTP p99 latency above httpLatencyP99AlarmMs for 15 minutes', () => {
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Threshold: 5000,
      EvaluationPeriods: 3,
      AlarmActions: alarmTopic,
    });
  });

  it(`page on push failures above ${pushFailureAlarmPercent} % of pushes tried, once ${pushFailureAlarmMinimum} were tried in five minutes`, () => {
    const source = readFileSync(path.join(repoRoot, 'functions/domain/push/send.ts'), 'utf8');
    expect(source).toContain(`countMetric('${pushFailedMetricName}'`);
    expect(source).toContain(`countMetric('${pushSentMetricName}'`);

    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: `IF(sent + failed >= ${pushFailureAlarmMinimum}, 100 * failed / (sent + failed), 0)` }),
        Match.objectLike({ Id: 'sent', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: pushSentMetricName }) }) }),
        Match.objectLike({
          Id: 'failed',
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ Namespace: 'Chat', MetricName: pushFailedMetricName }) }),
        }),
      ]),
      Threshold: pushFailureAlarmPercent,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      AlarmActions: alarmTopic,
      OKActions: alarmTopic,
    });
  });

  it('page on the WebSocket integration error share of connects and messages', () => {
    root.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('errors / \\(connects \\+ messages\\)') }),
        Match.objectLike({ Id: 'errors', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'IntegrationError' }) }) }),
      ]),
      Threshold: 5,
      AlarmActions: alarmTopic,
    });
  });
});

describe('state machines', () => {
  it.each(stateMachines)('$id pages on failed and on timed-out executions', (machine) => {
    const template = areaTemplate('Webhooks');
    for (const metricName of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/States',
        MetricName: metricName,
        Threshold: 1,
        AlarmActions: alarmTopic,
      });
    }
    expect(machine.id).toBe('WebhookRetry');
  });
});

describe('the cost of the alarms', () => {
  const cost = alarmCost(stacks.map((stack) => stack.template));
  const allAlarms = stacks.flatMap(({ template }: { template: TemplateJson }) =>
    Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm'),
  );

  it('counts every alarm of every stack, a math alarm by the metrics it reads', () => {
    expect(cost.alarms).toBe(allAlarms.length);
    expect(cost.compositeAlarms).toBe(areas.length);
    expect(metricsOfAlarm({ MetricName: 'Errors' })).toBe(1);
    expect(metricsOfAlarm({ Metrics: [{ Expression: 'a + b' }, { MetricStat: {} }, { MetricStat: {} }] })).toBe(2);
    expect(cost.alarmMetrics).toBeGreaterThan(cost.alarms);
    expect(cost.monthlyDollars).toBeCloseTo(
      cost.alarmMetrics * alarmPrices.perAlarmMetric + cost.compositeAlarms * alarmPrices.perCompositeAlarm,
      2,
    );
  });

  it('is in the cost model of docs/performance.md (bench/synth.ts writes it)', () => {
    const performance = readFileSync(path.join(repoRoot, 'docs/performance.md'), 'utf8');
    expect(performance).toContain(
      `${cost.alarms} alarms reading ${cost.alarmMetrics} metrics and ${cost.compositeAlarms} composite alarms`,
    );
    expect(performance).toContain(`$${cost.monthlyDollars.toFixed(2)} a month`);
  });
});
