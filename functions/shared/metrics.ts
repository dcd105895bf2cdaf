import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logger } from '#shared/logger';

/**
 * Metrics as CloudWatch embedded metric format (EMF), written by Powertools Metrics: one JSON log
 * line per record, which Lambda's log pipeline turns into metrics (namespace `Chat`, dimension
 * `service` only: CloudWatch bills each dimension combination as a metric of its own).
 *
 * A record that names a project also carries the marker {@link FIGURES_MARKER}: the figures behind
 * `/stats/*` are those records, summed per project per minute by the stats aggregator
 * (`functions/workers/aggregate-figures.ts`), fed on AWS by a log subscription whose filter pattern
 * matches the marker. The project id travels as a property, never as a dimension. The local runtime
 * adds a sink that receives every record instead of standard output (there is no CloudWatch on one
 * machine) and feeds the same aggregator.
 */
export const METRICS_NAMESPACE = 'Chat';

/** The property (and its value) that marks a record the stats aggregator sums. */
export const FIGURES_MARKER = { key: 'figures', value: 'v1' } as const;

/** One EMF record as written: metric values and properties at the top level beside `_aws`. */
export type MetricRecord = Readonly<Record<string, unknown>>;

/** Receives each metric of a record (name, value) with the whole record. */
type Sink = (name: string, value: number, record: MetricRecord) => void;
const sinks: Sink[] = [];

export function addMetricSink(sink: Sink): void {
  sinks.push(sink);
}

/** Every record ends here: to the sinks when there are any, else to standard output as Powertools writes it. */
class ChatMetrics extends Metrics {
  override publishStoredMetrics(): this {
    if (sinks.length === 0 || !this.hasStoredMetrics()) return super.publishStoredMetrics();
    let record: MetricRecord;
    try {
      record = this.serializeMetrics() as unknown as MetricRecord;
    } finally {
      this.clearMetrics();
      this.clearDimensions();
      this.clearMetadata();
    }
    const names = ((record._aws as { CloudWatchMetrics: { Metrics: { Name: string }[] }[] }).CloudWatchMetrics[0]?.Metrics ?? []).map(
      (metric) => metric.Name,
    );
    for (const sink of sinks) for (const name of names) sink(name, Number(record[name]), record);
    return this;
  }
}

// A function that emitted nothing in an invocation is normal (most queue batches count nothing):
// Powertools' warning about it would be one log line per invocation.
const quietLogger = {
  debug: () => undefined,
  info: (message: string) => logger.info(message),
  warn: (message: string) => {
    if (!message.startsWith('No application metrics to publish')) logger.warn(message);
  },
  error: (message: string) => logger.error(message),
};

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'chat';

/** The invocation's metrics: the edge pipelines' `logMetrics` writes them once when the invocation ends. */
export const metrics = new ChatMetrics({ namespace: METRICS_NAMESPACE, serviceName, logger: quietLogger });

/** Records written at once, one per data point (a batch handler counts for many projects in one invocation). */
const single = new ChatMetrics({ namespace: METRICS_NAMESPACE, serviceName, singleMetric: true, logger: quietLogger });

/**
 * Counts `value` of `name`. With a project id the record is one of the project's figures (summed
 * for `/stats/*` under the same name); without one it is a service-wide metric only.
 */
export function countMetric(name: string, value = 1, figure?: { readonly projectId: string }): void {
  if (figure) {
    single.addMetadata(FIGURES_MARKER.key, FIGURES_MARKER.value);
    single.addMetadata('projectId', figure.projectId);
  }
  single.addMetric(name, MetricUnit.Count, value);
}

/** What one HTTP request (or WebSocket handshake) leaves behind: one record, written with the invocation's metrics. */
export interface RequestFigure {
  readonly projectId: string;
  readonly route: string;
  readonly status: number;
  readonly latencyMs: number;
}

/** Metric names of the request record (also the counters the aggregator keeps). */
export const REQUEST_METRICS = {
  requests: 'requests_total',
  clientErrors: 'requests_4xx',
  serverErrors: 'requests_5xx',
  latency: 'request_latency',
} as const;

export function recordRequest(figure: RequestFigure): void {
  metrics.addMetadata(FIGURES_MARKER.key, FIGURES_MARKER.value);
  metrics.addMetadata('projectId', figure.projectId);
  metrics.addMetadata('route', figure.route);
  metrics.addMetadata('status', String(figure.status));
  metrics.addMetric(REQUEST_METRICS.requests, MetricUnit.Count, 1);
  if (figure.status >= 500) metrics.addMetric(REQUEST_METRICS.serverErrors, MetricUnit.Count, 1);
  else if (figure.status >= 400) metrics.addMetric(REQUEST_METRICS.clientErrors, MetricUnit.Count, 1);
  metrics.addMetric(REQUEST_METRICS.latency, MetricUnit.Milliseconds, Math.max(0, Math.round(figure.latencyMs)));
}
