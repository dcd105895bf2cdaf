import { Aws, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { HttpStage, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmRule,
  AlarmStatusWidget,
  ComparisonOperator,
  CompositeAlarm,
  Dashboard,
  GraphWidget,
  type IAlarm,
  type IAlarmAction,
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
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../functions/shared/metrics.ts';
import { type ChatFunction, defaultServiceName } from './chat-function.ts';
import type { ChatQueue, StreamFailureQueue } from './chat-queues.ts';

const fiveMinutes = Duration.minutes(5);

/** A count the functions emit as EMF (namespace `Chat`, dimension `service`), summed per five minutes. */
const serviceSum = (serviceName: string | undefined, metricName: string, label?: string) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: serviceName ?? defaultServiceName },
    statistic: 'Sum',
    period: fiveMinutes,
    label,
  });

/** A working queue whose oldest message waits this long has a consumer that stopped keeping up. */
export const queueAgeAlarmSeconds = 900;

/** A table stream consumer this far behind the newest record is stalled (`IteratorAge`, Maximum). */
export const iteratorAgeAlarmSeconds = 300;

/** Lambda throttles, account-wide, in five minutes that make an alarm (in two of three periods). */
export const throttlesAlarmThreshold = 5;

/**
 * The count the webhook code emits (as CloudWatch EMF, namespace `Chat`, dimension `service`) when
 * a delivery gives up: `WEBHOOK_FAILED_METRIC` in `functions/domain/webhooks/deliveries.ts`.
 */
export const webhookDeliveryFailedMetricName = 'webhook_delivery_failed';

/** The count of webhook attempts the receiver took (2xx): `WEBHOOK_DELIVERED_METRIC` beside it. */
export const webhookDeliveredMetricName = 'webhook_delivered';

/**
 * The counts the push senders emit per batch (`functions/domain/push/send.ts`): pushes the
 * provider took, and pushes it refused or that failed on the way.
 */
export const pushSentMetricName = 'push_sent';
export const pushFailedMetricName = 'push_failed';

/** The share of pushes failing (of those sent and failed, in five minutes) that pages, once at least {@link pushFailureAlarmMinimum} were tried. */
export const pushFailureAlarmPercent = 20;
/** Pushes tried in five minutes below which the failure share is not judged: a handful of dead tokens is not an outage. */
export const pushFailureAlarmMinimum = 20;

/**
 * The count the event publisher emits for stream records it hands back to the stream unpublished:
 * `EVENTS_PUBLISH_FAILED_METRIC` in `functions/domain/events/publisher.ts`.
 */
export const eventsPublishFailedMetricName = 'events_publish_failed';

/** Properties of {@link ChatAlarmTopic}. */
export interface ChatAlarmTopicProps {
  readonly stage: string;
  /**
   * E-mail address subscribed to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /** What happens to the topic's KMS key when it is removed from the stack. */
  readonly keyRemovalPolicy: RemovalPolicy;
}

/**
 * The SNS topic every alarm of the service notifies, in the root stack. Encrypted with a
 * customer-managed KMS key (CloudWatch may not use the AWS-managed SNS key) that refuses non-TLS publishers.
 */
export class ChatAlarmTopic extends Construct {
  public readonly topic: Topic;

  constructor(scope: Construct, id: string, props: ChatAlarmTopicProps) {
    super(scope, id);
    const topicKey = new Key(this, 'AlarmTopicKey', {
      description: `Encrypts the chat-${props.stage} alarm topic`,
      enableKeyRotation: true,
      removalPolicy: props.keyRemovalPolicy,
    });
    // CloudWatch alarms publish to an encrypted topic only if they may use its key.
    topicKey.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'AlarmTopic', {
      displayName: `chat-${props.stage} alarms`,
      masterKey: topicKey,
      enforceSSL: true,
    });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
  }
}

/** Alarms that notify the alarm topic when they fire and when they recover. */
class Notifier {
  public readonly alarms: Alarm[] = [];
  private readonly action: IAlarmAction;

  constructor(topic: ITopic) {
    this.action = new SnsAction(topic);
  }

  track(alarm: Alarm): Alarm {
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }
}

/**
 * Fires when the number of messages in a queue nothing consumes (a dead-letter queue, a stream
 * consumer's failure queue) rises: `DIFF` of the visible count over five-minute maxima. An alarm on
 * "any message" would stay in alarm for the queue's 14 days of retention and never notify again;
 * this one notifies for each new arrival and recovers once the count stops rising (or a redrive
 * empties the queue).
 */
function risingCountAlarm(scope: Construct, id: string, queue: IQueue, description: string): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: description,
    metric: new MathExpression({
      label: 'new messages',
      expression: 'DIFF(visible)',
      usingMetrics: { visible: queue.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }) },
      period: fiveMinutes,
    }),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/** Fires when messages arrive in a queue's dead-letter queue. */
function deadLetterAlarm(scope: Construct, queue: ChatQueue): Alarm {
  return risingCountAlarm(
    scope,
    `${queue.id}DeadLetterAlarm`,
    queue.deadLetterQueue,
    `New messages of the ${queue.id} queue failed ${queue.maxReceiveCount} times and wait in its dead-letter queue.`,
  );
}

/** Fires when a working queue's oldest message has waited {@link queueAgeAlarmSeconds}: its consumer fell behind or stopped. */
function queueAgeAlarm(scope: Construct, queue: ChatQueue): Alarm {
  return new Alarm(scope, `${queue.id}QueueAgeAlarm`, {
    alarmDescription: `The oldest message of the ${queue.id} queue has waited over ${queueAgeAlarmSeconds / 60} minutes: its consumer is failing, throttled or too slow.`,
    metric: queue.queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
    threshold: queueAgeAlarmSeconds,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 2,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}

/** Properties of {@link AreaAlarms}. */
export interface AreaAlarmsProps {
  readonly areaId: string;
  readonly alarmTopic: ITopic;
  /** The area's functions, by wiring-table id; each gets an error alarm. */
  readonly functions: ReadonlyMap<string, ChatFunction>;
  /** The area's state machines, by id; each gets an alarm on failed executions. */
  readonly stateMachines: ReadonlyMap<string, IStateMachine>;
  /** The area's own queues (event subscribers); each dead-letter queue gets an alarm. */
  readonly queues: readonly ChatQueue[];
  /** The on-failure queues of the area's stream consumers; each gets an alarm when messages arrive. */
  readonly failureQueues: readonly StreamFailureQueue[];
  /** The ids of the area's table stream consumers (among `functions`); each gets an iterator age alarm. */
  readonly streamConsumerIds: readonly string[];
}

/**
 * The alarms of one area, in the area's nested stack so that they grow with it: function errors,
 * failed and timed-out state machine executions, new messages in the area's dead-letter and
 * failure queues, the age of its queues' oldest messages, and how far its stream consumers lag
 * behind the table stream. Each notifies the
 * root's alarm topic; one composite alarm (`<Area> area`, no actions of its own) is in alarm while
 * any of them is, for the dashboard.
 */
export class AreaAlarms extends Construct {
  /** Fires on unhandled errors or timeouts of a function, by its wiring-table id. */
  public readonly functionErrorAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when an execution of a state machine fails, by state machine id. */
  public readonly stateMachineFailedAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when an execution of a state machine timed out, by state machine id. */
  public readonly stateMachineTimedOutAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when messages arrive in a dead-letter queue of the area, by queue id. */
  public readonly deadLetterAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when the oldest message of a queue of the area is too old, by queue id. */
  public readonly queueAgeAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when a stream consumer gave up on a batch (a note arrived in its failure queue), by queue id. */
  public readonly streamFailureAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when a stream consumer lags the table stream, by function id. */
  public readonly iteratorAgeAlarms: ReadonlyMap<string, Alarm>;
  /** In alarm while any alarm of the area is; `undefined` for an area without alarms. */
  public readonly areaAlarm?: CompositeAlarm;

  constructor(scope: Construct, id: string, props: AreaAlarmsProps) {
    super(scope, id);
    const notifier = new Notifier(props.alarmTopic);

    this.functionErrorAlarms = new Map(
      [...props.functions].map(([functionId, fn]) => [
        functionId,
        notifier.track(
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
      ]),
    );
    this.stateMachineFailedAlarms = new Map(
      [...props.stateMachines].map(([machineId, machine]) => [
        machineId,
        notifier.track(
          new Alarm(this, `${machineId}ExecutionsFailedAlarm`, {
            alarmDescription: `An execution of the ${machineId} state machine failed (a task error the ASL does not retry or catch).`,
            metric: machine.metricFailed({ period: fiveMinutes, statistic: 'Sum' }),
            threshold: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
        ),
      ]),
    );
    this.stateMachineTimedOutAlarms = new Map(
      [...props.stateMachines].map(([machineId, machine]) => [
        machineId,
        notifier.track(
          new Alarm(this, `${machineId}ExecutionsTimedOutAlarm`, {
            alarmDescription: `An execution of the ${machineId} state machine ran past its TimeoutSeconds and was stopped; its work may be left half done.`,
            metric: machine.metricTimedOut({ period: fiveMinutes, statistic: 'Sum' }),
            threshold: 1,
            comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: TreatMissingData.NOT_BREACHING,
          }),
        ),
      ]),
    );
    this.deadLetterAlarms = new Map(props.queues.map((queue) => [queue.id, notifier.track(deadLetterAlarm(this, queue))]));
    this.queueAgeAlarms = new Map(props.queues.map((queue) => [queue.id, notifier.track(queueAgeAlarm(this, queue))]));
    this.streamFailureAlarms = new Map(
      props.failureQueues.map(({ id: queueId, queue }) => [
        queueId,
        notifier.track(
          risingCountAlarm(
            this,
            `${queueId}Alarm`,
            queue,
            `A batch of the table stream still failed after its retries: ${queueId} holds its coordinates; republish those records' events from the table.`,
          ),
        ),
      ]),
    );
    this.iteratorAgeAlarms = new Map(
      props.streamConsumerIds.map((functionId) => {
        const fn = props.functions.get(functionId);
        if (!fn) throw new Error(`Stream consumer ${functionId} has no function in its area`);
        return [
          functionId,
          notifier.track(
            new Alarm(this, `${functionId}IteratorAgeAlarm`, {
              alarmDescription: `${functionId} is over ${iteratorAgeAlarmSeconds / 60} minutes behind the table stream: events are delayed (failing or throttled batches).`,
              metric: fn.metric('IteratorAge', { period: fiveMinutes, statistic: 'Maximum' }),
              threshold: iteratorAgeAlarmSeconds * 1000,
              comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
              evaluationPeriods: 2,
              treatMissingData: TreatMissingData.NOT_BREACHING,
            }),
          ),
        ];
      }),
    );
    if (notifier.alarms.length > 0) {
      this.areaAlarm = new CompositeAlarm(this, 'AreaAlarm', {
        alarmDescription: `Any alarm of the ${props.areaId} area (functions, state machines, queues, stream consumers); each notifies on its own.`,
        alarmRule: AlarmRule.anyOf(...notifier.alarms),
        actionsEnabled: false,
      });
    }
  }
}

/** One area as the dashboard shows it. */
export interface DashboardArea {
  readonly id: string;
  readonly functions: ReadonlyMap<string, ChatFunction>;
  readonly stateMachines: ReadonlyMap<string, IStateMachine>;
  readonly queues: readonly ChatQueue[];
  readonly failureQueues: readonly StreamFailureQueue[];
  readonly areaAlarm?: IAlarm;
}

/** Properties of {@link ChatObservability}. */
export interface ChatObservabilityProps {
  /** Used in the dashboard name: `chat-<stage>`. */
  readonly stage: string;
  readonly alarmTopic: ITopic;
  readonly httpStage: HttpStage;
  readonly webSocketStage: WebSocketStage;
  readonly table: ITableV2;
  /** The domain event topic: an alarm on failed deliveries to its subscribers' queues. */
  readonly eventTopic: ITopic;
  /** The shared queues (root); each gets an alarm on its oldest message's age and on dead letters. */
  readonly queues: readonly ChatQueue[];
  /** The areas, whose functions, state machines, queues and area alarm the dashboard shows. */
  readonly areas: readonly DashboardArea[];
  /**
   * `POWERTOOLS_SERVICE_NAME` of the functions: the `service` dimension of the metrics they emit.
   * @default defaultServiceName ('chat')
   */
  readonly serviceName?: string;
  /**
   * HTTP API 5xx responses, in percent of requests, above which the 5xx alarm fires.
   * @default 5
   */
  readonly http5xxAlarmPercent?: number;
  /**
   * HTTP API p99 latency in milliseconds above which the latency alarm fires.
   * @default 5000
   */
  readonly httpLatencyP99AlarmMs?: number;
  /**
   * `ClaimedAccountConcurrency` at which the account concurrency alarm fires.
   * @default 800
   */
  readonly accountConcurrencyAlarmThreshold?: number;
}

/**
 * The root's alarms (HTTP 5xx rate and p99 latency, WebSocket integration errors, Lambda throttles
 * and the account's concurrency, DynamoDB throttles, event topic delivery failures, stream records
 * the publisher could not publish, webhook deliveries given up, the shared queues' age and dead
 * letters) and the CloudWatch dashboard of the whole service: APIs, the table, every queue, and per
 * area its functions' errors, durations and throttles and its state machines. The alarm widget
 * shows the root's alarms and one composite per area.
 *
 * The dashboard's name carries the region: dashboard names are global to the account, so the same
 * stage deployed in two regions would otherwise fight over one dashboard.
 */
export class ChatObservability extends Construct {
  public readonly dashboard: Dashboard;
  /** Fires when messages arrive in a shared dead-letter queue, by queue id. */
  public readonly deadLetterAlarms: ReadonlyMap<string, Alarm>;
  /** Fires when the oldest message of a shared queue is too old, by queue id. */
  public readonly queueAgeAlarms: ReadonlyMap<string, Alarm>;
  /** Every alarm of the root, by its construct id. */
  public readonly alarms: ReadonlyMap<string, Alarm>;
  /** Fires when the HTTP API's 5xx share of requests is above the threshold. */
  public readonly http5xxAlarm: Alarm;
  /** Fires when a webhook delivery used up its attempts (`webhook_delivery_failed`). */
  public readonly webhookDeliveryFailedAlarm: Alarm;

  constructor(scope: Construct, id: string, props: ChatObservabilityProps) {
    super(scope, id);
    const notifier = new Notifier(props.alarmTopic);

    this.deadLetterAlarms = new Map(props.queues.map((queue) => [queue.id, notifier.track(deadLetterAlarm(this, queue))]));
    this.queueAgeAlarms = new Map(props.queues.map((queue) => [queue.id, notifier.track(queueAgeAlarm(this, queue))]));

    const http5xxRate = new MathExpression({
      label: 'HTTP 5xx %',
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: {
        errors: props.httpStage.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
        requests: props.httpStage.metricCount({ period: fiveMinutes, statistic: 'Sum' }),
      },
      period: fiveMinutes,
    });
    this.http5xxAlarm = notifier.track(
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

    const webhookDeliveryFailed = serviceSum(props.serviceName, webhookDeliveryFailedMetricName);
    this.webhookDeliveryFailedAlarm = notifier.track(
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

    notifier.track(
      new Alarm(this, 'HttpLatencyP99Alarm', {
        alarmDescription: 'The HTTP API p99 latency stayed above the threshold for 15 minutes.',
        metric: props.httpStage.metricLatency({ period: fiveMinutes, statistic: 'p99' }),
        threshold: props.httpLatencyP99AlarmMs ?? 5000,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const wsMetric = (metricName: string) => props.webSocketStage.metric(metricName, { period: fiveMinutes, statistic: 'Sum' });
    notifier.track(
      new Alarm(this, 'WebSocketIntegrationErrorsAlarm', {
        alarmDescription:
          'WebSocket integration errors (4xx/5xx from the route functions, refused $connects included) are above the ' +
          'threshold share of connects and messages.',
        metric: new MathExpression({
          label: 'WebSocket integration errors %',
          expression: 'IF(connects + messages > 0, 100 * errors / (connects + messages), 0)',
          usingMetrics: { errors: wsMetric('IntegrationError'), connects: wsMetric('ConnectCount'), messages: wsMetric('MessageCount') },
          period: fiveMinutes,
        }),
        threshold: props.http5xxAlarmPercent ?? 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    // Account-wide Lambda metrics: no dimensions.
    const lambdaAccountMetric = (metricName: string, statistic: string) =>
      new Metric({ namespace: 'AWS/Lambda', metricName, statistic, period: fiveMinutes });
    notifier.track(
      new Alarm(this, 'LambdaThrottlesAlarm', {
        alarmDescription:
          'Lambda throttled invocations in this account and region: a reservation or the account quota is exhausted ' +
          '(the dashboard shows which functions).',
        metric: lambdaAccountMetric('Throttles', 'Sum'),
        threshold: throttlesAlarmThreshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    notifier.track(
      new Alarm(this, 'AccountConcurrencyAlarm', {
        alarmDescription:
          'ClaimedAccountConcurrency (concurrency in use plus reservations) nears the account quota: raise the quota ' +
          'or lower the reservations before invocations are throttled.',
        metric: lambdaAccountMetric('ClaimedAccountConcurrency', 'Maximum'),
        threshold: props.accountConcurrencyAlarmThreshold ?? 800,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const tableSum = (metricName: string) => props.table.metric(metricName, { period: fiveMinutes, statistic: 'Sum' });
    notifier.track(
      new Alarm(this, 'TableThrottlesAlarm', {
        alarmDescription: 'DynamoDB throttled reads or writes of the table (a hot partition, or on-demand scaling behind a spike).',
        metric: new MathExpression({
          label: 'throttle events',
          expression: 'reads + writes',
          usingMetrics: { reads: tableSum('ReadThrottleEvents'), writes: tableSum('WriteThrottleEvents') },
          period: fiveMinutes,
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    notifier.track(
      new Alarm(this, 'EventDeliveryFailedAlarm', {
        alarmDescription: "The event topic failed to deliver events to a subscriber's queue (a queue policy or key problem).",
        metric: props.eventTopic.metricNumberOfNotificationsFailed({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    notifier.track(
      new Alarm(this, 'EventsPublishFailedAlarm', {
        alarmDescription:
          'The event publisher handed stream records back unpublished (events_publish_failed): events are delayed while ' +
          'the stream retries them, and a batch that still fails lands in EventPublisherFailures.',
        metric: serviceSum(props.serviceName, eventsPublishFailedMetricName),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    const serviceMetric = (metricName: string, label: string) => serviceSum(props.serviceName, metricName, label);
    const pushFailureRate = new MathExpression({
      label: 'push failures %',
      expression: `IF(sent + failed >= ${pushFailureAlarmMinimum}, 100 * failed / (sent + failed), 0)`,
      usingMetrics: { sent: serviceMetric(pushSentMetricName, 'sent'), failed: serviceMetric(pushFailedMetricName, 'failed') },
      period: fiveMinutes,
    });
    notifier.track(
      new Alarm(this, 'PushFailuresAlarm', {
        alarmDescription:
          `More than ${pushFailureAlarmPercent} % of push notifications failed (push_failed of push_sent + push_failed, ` +
          `at least ${pushFailureAlarmMinimum} tried in five minutes): a provider credential, an outage or a bad configuration.`,
        metric: pushFailureRate,
        threshold: pushFailureAlarmPercent,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
    this.alarms = new Map(notifier.alarms.map((alarm) => [alarm.node.id, alarm]));

    const statusAlarms: IAlarm[] = [...notifier.alarms, ...props.areas.flatMap((area) => (area.areaAlarm ? [area.areaAlarm] : []))];
    this.dashboard = this.buildDashboard(props, http5xxRate, webhookDeliveryFailed, pushFailureRate, statusAlarms);
  }

  private buildDashboard(
    props: ChatObservabilityProps,
    http5xxRate: IMetric,
    webhookDeliveryFailed: Metric,
    pushFailureRate: IMetric,
    alarms: IAlarm[],
  ): Dashboard {
    const { httpStage, webSocketStage, table } = props;
    const wsMetric = (metricName: string, label: string) =>
      webSocketStage.metric(metricName, { period: fiveMinutes, statistic: 'Sum', label });
    const tableSum = (metricName: string, label: string) => table.metric(metricName, { period: fiveMinutes, statistic: 'Sum', label });
    const wide = { width: 12, height: 6 } as const;
    const third = { width: 8, height: 6 } as const;
    const queues = [...props.queues, ...props.areas.flatMap((area) => area.queues)];
    const failureQueues = props.areas.flatMap((area) => area.failureQueues);
    const webhookDelivered = serviceSum(props.serviceName, webhookDeliveredMetricName, 'deliveries delivered');

    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `chat-${props.stage}-${Aws.REGION}`,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new TextWidget({
        markdown: `# chat-${props.stage}\nHTTP and WebSocket APIs, the table, the queues, then each area's functions and state machines. Alarms notify the SNS topic "chat-${props.stage} alarms"; an area's status is in alarm while any alarm of the area is.`,
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
        title: 'WebSocket API latency',
        left: [
          webSocketStage.metric('IntegrationLatency', { period: fiveMinutes, statistic: 'p50', label: 'integration p50' }),
          webSocketStage.metric('IntegrationLatency', { period: fiveMinutes, statistic: 'p99', label: 'integration p99' }),
        ],
        ...wide,
      }),
      new GraphWidget({
        title: 'Lambda concurrency and throttles (account)',
        left: [
          new Metric({
            namespace: 'AWS/Lambda',
            metricName: 'ConcurrentExecutions',
            statistic: 'Maximum',
            period: fiveMinutes,
            label: 'concurrent',
          }),
          new Metric({
            namespace: 'AWS/Lambda',
            metricName: 'ClaimedAccountConcurrency',
            statistic: 'Maximum',
            period: fiveMinutes,
            label: 'claimed (with reservations)',
          }),
        ],
        right: [
          new Metric({ namespace: 'AWS/Lambda', metricName: 'Throttles', statistic: 'Sum', period: fiveMinutes, label: 'throttles' }),
        ],
        ...wide,
      }),
      new GraphWidget({
        title: 'Queues',
        left: queues.flatMap(({ id, queue, deadLetterQueue }) => [
          queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), label: `${id} visible` }),
          deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), label: `${id} dead letters` }),
        ]),
        right: [
          ...queues.map(({ id, queue }) =>
            queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), label: `${id} oldest (s)` }),
          ),
          ...failureQueues.map(({ id, queue }) =>
            queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), label: `${id} (stream batches given up)` }),
          ),
        ],
        ...wide,
      }),
    );
    dashboard.addWidgets(
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
      new GraphWidget({
        title: 'Webhook deliveries',
        left: [webhookDeliveryFailed.with({ label: 'deliveries failed (gave up)' }), webhookDelivered],
        right: [
          new MathExpression({
            expression: 'IF(delivered + failed > 0, 100 * failed / (delivered + failed), 0)',
            usingMetrics: { delivered: webhookDelivered, failed: webhookDeliveryFailed },
            label: 'failure rate %',
            period: fiveMinutes,
          }),
        ],
        ...wide,
      }),
    );
    const pushCount = (metricName: string, label: string) => serviceSum(props.serviceName, metricName, label);
    const pushSent = pushCount('push_sent', 'sent');
    const pushDelivered = pushCount('push_delivered', 'delivered (acknowledged)');
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Push notifications',
        left: [pushSent, pushCount('push_failed', 'failed'), pushCount('push_target_removed', 'dead targets removed'), pushDelivered],
        right: [
          new MathExpression({
            expression: 'IF(sent > 0, 100 * delivered / sent, 0)',
            usingMetrics: { sent: pushSent, delivered: pushDelivered },
            label: 'delivery rate %',
            period: fiveMinutes,
          }),
          pushFailureRate,
        ],
        ...wide,
      }),
    );
    for (const area of props.areas) {
      const functions = [...area.functions];
      dashboard.addWidgets(new TextWidget({ markdown: `## ${area.id}`, width: 24, height: 1 }));
      dashboard.addWidgets(
        new GraphWidget({
          title: `${area.id}: Lambda errors`,
          left: functions.map(([functionId, fn]) => fn.metricErrors({ period: fiveMinutes, statistic: 'Sum', label: functionId })),
          ...third,
        }),
        new GraphWidget({
          title: `${area.id}: Lambda duration p99`,
          left: functions.map(([functionId, fn]) => fn.metricDuration({ period: fiveMinutes, statistic: 'p99', label: functionId })),
          ...third,
        }),
        new GraphWidget({
          title: `${area.id}: Lambda throttles`,
          left: functions.map(([functionId, fn]) => fn.metricThrottles({ period: fiveMinutes, statistic: 'Sum', label: functionId })),
          ...third,
        }),
      );
      const machines = [...area.stateMachines];
      if (machines.length > 0) {
        dashboard.addWidgets(
          new GraphWidget({
            title: `${area.id}: state machine executions`,
            left: machines.flatMap(([machineId, machine]) => [
              machine.metricStarted({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} started` }),
              machine.metricSucceeded({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} succeeded` }),
            ]),
            right: machines.flatMap(([machineId, machine]) => [
              machine.metricFailed({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} failed` }),
              machine.metricTimedOut({ period: fiveMinutes, statistic: 'Sum', label: `${machineId} timed out` }),
            ]),
            width: 24,
            height: 6,
          }),
        );
      }
    }
    return dashboard;
  }
}
