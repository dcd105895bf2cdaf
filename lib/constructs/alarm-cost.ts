/**
 * What the alarms of a cloud assembly cost a month, read from its templates at CloudWatch list
 * prices (us-east-1): a standard-resolution metric alarm is billed per metric it reads (a metric
 * math alarm per metric of its expression; the expressions themselves are free), a composite alarm
 * per alarm. Used by the benchmark report's cost model (`bench/synth.ts`) and checked against the
 * templates in `test/infra/alarms.test.ts`.
 */

/** Dollars a month. */
export const alarmPrices = { perAlarmMetric: 0.1, perCompositeAlarm: 0.5 } as const;

export interface AlarmCost {
  /** Metric alarms, math alarms included. */
  readonly alarms: number;
  /** The metrics those alarms read, each billed once per alarm. */
  readonly alarmMetrics: number;
  readonly compositeAlarms: number;
  readonly monthlyDollars: number;
}

interface TemplateLike {
  readonly Resources: Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>;
}

/** The metrics one `AWS::CloudWatch::Alarm` reads: its metric, or the `MetricStat`s of its math. */
export function metricsOfAlarm(properties: Record<string, unknown>): number {
  const metrics = properties.Metrics as Array<{ MetricStat?: unknown }> | undefined;
  return metrics ? metrics.filter((metric) => metric.MetricStat !== undefined).length : 1;
}

export function alarmCost(templates: readonly TemplateLike[]): AlarmCost {
  const resources = templates.flatMap((template) => Object.values(template.Resources));
  const alarms = resources.filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm');
  const alarmMetrics = alarms.reduce((total, alarm) => total + metricsOfAlarm(alarm.Properties ?? {}), 0);
  const compositeAlarms = resources.filter((resource) => resource.Type === 'AWS::CloudWatch::CompositeAlarm').length;
  const cents = alarmMetrics * alarmPrices.perAlarmMetric * 100 + compositeAlarms * alarmPrices.perCompositeAlarm * 100;
  return { alarms: alarms.length, alarmMetrics, compositeAlarms, monthlyDollars: Math.round(cents) / 100 };
}
