/**
 * Counters as CloudWatch embedded metric format: one JSON log line per data point, which Lambda's
 * log pipeline turns into metrics (namespace `Chat`). The local runtime adds a sink to count them,
 * since there is no CloudWatch on one machine.
 */
export const METRICS_NAMESPACE = 'Chat';

type Sink = (name: string, value: number) => void;
const sinks: Sink[] = [];

export function addMetricSink(sink: Sink): void {
  sinks.push(sink);
}

export function countMetric(name: string, value = 1): void {
  const line = {
    _aws: {
      Timestamp: Date.now(),
      CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE, Dimensions: [['service']], Metrics: [{ Name: name, Unit: 'Count' }] }],
    },
    service: process.env.POWERTOOLS_SERVICE_NAME ?? 'chat',
    [name]: value,
  };
  if (sinks.length === 0) process.stdout.write(`${JSON.stringify(line)}\n`);
  for (const sink of sinks) sink(name, value);
}
