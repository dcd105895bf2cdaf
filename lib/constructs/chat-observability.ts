import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { HttpStage, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../functions/shared/metrics.ts';
import { type ChatFunction, defaultServiceName } from './chat-function.ts';
import type { ChatQueue } from './chat-queues.ts';

const fiveMinutes = Duration.minutes(5);

/**
 * The count the webhook code emits (as CloudWatch EMF, namespace `Chat`, dimension `service`) when
 * a delivery gives up: `WEBHOOK_FAILED_METRIC` in `functions/domain/webhooks/deliveries.ts`.
 */
export const webhookDeliveryFailedMetricName = 'webhook_delivery_failed';

/** Properties of {@link ChatObservability}. */
export interface ChatObservabilityProps {
  /** Used in the dashboard name: `chat-<stage>`. */
  readonly stage: string;
  readonly httpStage: HttpStage;
  readonly webSocketStage: WebSocketStage;
  /** Every function (routes, queue consumers, state machine tasks), by its wiring-table id; each gets an error alarm. */
  readonly functions: ReadonlyMap<string, ChatFunction>;
  /** Every state machine, by its wiring-table id; each gets an alarm on failed executions. */
  readonly stateMachines: ReadonlyMap<string, IStateMachine>;
  /**
   * `POWERTOOLS_SERVICE_NAME` of the functions: the `service` dimension of the metrics they emit.
   * @default defaultServiceName ('chat')
   */
  readonly serviceName?: string;
  readonly table: ITableV2;
  /** Every queue with its dead-letter queue; each dead-letter queue gets an alarm. */
  readonly queues: readonly ChatQueue[];
  /**
   * HTTP API 5xx responses, in percent of requests, above which the 5xx alarm fires.
   * @default 5
   */
  readonly http5xxAlarmPercent?: number;
  /**
   * E-mail address subscribed to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /** What happens to the alarm topic's KMS key when it is removed from the stack. */
  readonly keyRemovalPolicy: RemovalPolicy;
}

/**
 * The CloudWatch dashboard and alarms of the service. Alarms notify an SNS topic encrypted with a
 * customer-managed KMS key (CloudWatch may not use the AWS-managed SNS key) that refuses non-TLS publishers.
 */
export class ChatObservability extends Construct {
  public readonly dashboard: Dashboard;
  public readonly alarmTopic: Topic;
  /** Fires when a dead-letter queue holds any message, by queue id. */
  public readonly deadLetterAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when the HTTP API's 5xx share of requests is above the threshold. */
  public readonly http5xxAlarm: Alarm;
  /** Fires on unhandled errors or timeouts of a function, by its wiring-table id. */
  public readonly functionErrorAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when a webhook delivery used up its attempts (`webhook_delivery_failed`). */
  public readonly webhookDeliveryFailedAlarm: Alarm;
  /** Fires when an execution of a state machine fails, by state machine id. */
  public readonly stateMachineFailedAlarms: ReadonlyMap<string, Alarm>;

  constructor(scope: Construct, id: string, props: ChatObservabilityProps) {
    super(scope, id);

    const topicKey = new Key(this, 'AlarmTopicKey', {
      description: `Encrypts the chat-${props.stage} alarm topic`,
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy,
    });
    // CloudWatch alarms publish to an encrypted topic only if they may use its key.
    topicKey.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: `chat-${props.stage} alarms`,
      masterKey: topicKey,
      enforceSSL: true,
    });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    const notify = new SnsAction(this.alarmTopic);
    const alarms: IAlarm[] = [];
    const track = (alarm: Alarm): Alarm => {
      alarm.addAlarmAction(notify);
      alarm.addOkAction(notify);
      alarms.push(alarm);
      return alarm;
    };

    const deadLetterAlarms = new Map<string, Alarm>();
    for (const { definition, deadLetterQueue } of props.queues) {
      deadLetterAlarms.set(
        definition.id,
        track(
          new Alarm(this, `${definition.id}DeadLetterAlarm`, {
            alarmDescription: `Messages of the ${definition.id} queue failed ${definition.maxReceiveCount} times and wait in its dead-letter queue.`,
            metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: Duration.minutes(1),
              statistic: 'Maximum',
            }),
            threshold: 0,
            comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
        ),
      );
    }
    this.deadLetterAlarms = deadLetterAlarms;

    const http5xxRate = new MathExpression({
      label: 'HTTP 5xx %',
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: {
        errors: props.httpStage.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
        requests: props.httpStage.metricCount({ period: fiveMinutes, statistic: 'Sum' }),
      },
      period: fiveMinutes,
    });
    this.http5xxAlarm = track(
      new Alarm(this, 'Http5xxAlarm', {
        alarmDescription: 'The HTTP API answers 5xx to too many requests.',
        metric: http5xxRate,
        threshold: props.http5xxAlarmPercent ?? 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    const functionErrorAlarms = new Map<string, Alarm>();
    for (const [functionId, fn] of props.functions) {
      functionErrorAlarms.set(
        functionId,
        track(
          new Alarm(this, `${functionId}ErrorsAlarm`, {
            alarmDescription: `${functionId} threw or timed out (errors a handler answers itself, as 4xx/5xx responses or partial batch failures, are not Lambda errors).`,
            metric: fn.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
            threshold: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 3,
            datapointsToAlarm: 2,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
        ),
      );
    }
    this.functionErrorAlarms = functionErrorAlarms;

    const webhookDeliveryFailed = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: webhookDeliveryFailedMetricName,
      dimensionsMap: { service: props.serviceName ?? defaultServiceName },
      statistic: 'Sum',
      period: fiveMinutes,
    });
    this.webhookDeliveryFailedAlarm = track(
      new Alarm(this, 'WebhookDeliveryFailedAlarm', {
        alarmDescription:
          'A webhook delivery used up its attempts (WEBHOOK_MAX_ATTEMPTS) and is marked failed; it can be replayed ' +
          'with POST /admin/webhooks/deliveries/{deliveryId}/replay once the receiver is fixed.',
        metric: webhookDeliveryFailed,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );

    const stateMachineFailedAlarms = new Map<string, Alarm>();
    for (const [machineId, stateMachine] of props.stateMachines) {
      stateMachineFailedAlarms.set(
        machineId,
        track(
          new Alarm(this, `${machineId}ExecutionsFailedAlarm`, {
            alarmDescription: `An execution of the ${machineId} state machine failed (a task error the ASL does not retry or catch).`,
            metric: stateMachine.metricFailed({ period: fiveMinutes, statistic: 'Sum' }),
            threshold: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
        ),
      );
    }
    this.stateMachineFailedAlarms = stateMachineFailedAlarms;

    this.dashboard = this.buildDashboard(props, http5xxRate, webhookDeliveryFailed, alarms);
  }

  private buildDashboard(props: ChatObservabilityProps, http5xxRate: IMetric, webhookDeliveryFailed: Metric, alarms: IAlarm[]): Dashboard {
    const { httpStage, webSocketStage, table } = props;
    const functions = [...props.functions.entries()];
    const wsMetric = (metricName: string, label: string) =>
      webSocketStage.metric(metricName, { period: fiveMinutes, statistic: 'Sum', label });
    const tableSum = (metricName: string, label: string) => table.metric(metricName, { period: fiveMinutes, statistic: 'Sum', label });
    const wide = { width: 12, height: 6 } as const;

    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `chat-${props.stage}`,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new TextWidget({
        markdown: `# chat-${props.stage}\nHTTP and WebSocket APIs, functions, the table, the queues and webhook deliveries. Alarms notify the SNS topic "chat-${props.stage} alarms".`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
    dashboard.addWidgets(
      new GraphWidget({
        title: 'HTTP API requests and errors',
        left: [
          httpStage.metricCount({ period: fiveMinutes, statistic: 'Sum', label: 'requests' }),
          httpStage.metricClientError({ period: fiveMinutes, statistic: 'Sum', label: '4xx' }),
          httpStage.metricServerError({ period: fiveMinutes, statistic: 'Sum', label: '5xx' }),
        ],
        right: [http5xxRate],
        ...wide,
      }),
      new GraphWidget({
        title: 'HTTP API latency',
        left: [
          httpStage.metricLatency({ period: fiveMinutes, statistic: 'p50', label: 'latency p50' }),
          httpStage.metricLatency({ period: fiveMinutes, statistic: 'p99', label: 'latency p99' }),
          httpStage.metricIntegrationLatency({ period: fiveMinutes, statistic: 'p99', label: 'integration p99' }),
        ],
        ...wide,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'WebSocket API',
        left: [wsMetric('ConnectCount', 'connects'), wsMetric('MessageCount', 'messages')],
        right: [
          wsMetric('IntegrationError', 'integration errors'),
          wsMetric('ExecutionError', 'execution errors'),
          wsMetric('ClientError', 'client errors'),
        ],
        ...wide,
      }),
      new GraphWidget({
        title: 'Queues',
        left: props.queues.flatMap(({ definition, queue, deadLetterQueue }) => [
          queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), label: `${definition.id} visible` }),
          deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: Duration.minutes(1),
            label: `${definition.id} dead letters`,
          }),
        ]),
        right: props.queues.map(({ definition, queue }) =>
          queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), label: `${definition.id} oldest (s)` }),
        ),
        ...wide,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda errors',
        left: functions.map(([functionId, fn]) => fn.metricErrors({ period: fiveMinutes, statistic: 'Sum', label: functionId })),
        ...wide,
      }),
      new GraphWidget({
        title: 'Lambda duration p99',
        left: functions.map(([functionId, fn]) => fn.metricDuration({ period: fiveMinutes, statistic: 'p99', label: functionId })),
        ...wide,
      }),
    );
    const machines = [...props.stateMachines.entries()];
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Webhook deliveries failed',
        left: [webhookDeliveryFailed.with({ label: 'webhook deliveries failed' })],
        ...wide,
      }),
      new GraphWidget({
        title: 'State machine executions',
        left: machines.flatMap(([machineId, machine]) => [
          machine.metricStarted({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} started` }),
          machine.metricSucceeded({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} succeeded` }),
        ]),
        right: machines.flatMap(([machineId, machine]) => [
          machine.metricFailed({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} failed` }),
          machine.metricTimedOut({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} timed out` }),
        ]),
        ...wide,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Lambda throttles',
        left: functions.map(([functionId, fn]) => fn.metricThrottles({ period: fiveMinutes, statistic: 'Sum', label: functionId })),
        ...wide,
      }),
      new GraphWidget({
        title: 'DynamoDB consumed capacity and throttles',
        left: [
          table.metricConsumedReadCapacityUnits({ period: fiveMinutes, statistic: 'Sum', label: 'read units' }),
          table.metricConsumedWriteCapacityUnits({ period: fiveMinutes, statistic: 'Sum', label: 'write units' }),
        ],
        right: [
          tableSum('ReadThrottleEvents', 'read throttles'),
          tableSum('WriteThrottleEvents', 'write throttles'),
          table.metricUserErrors({ period: fiveMinutes, statistic: 'Sum', label: 'user errors' }),
        ],
        ...wide,
      }),
    );
    return dashboard;
  }
}
