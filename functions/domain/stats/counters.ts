import { LATENCY_BOUNDS_MS, latencyBucket, latencyBucketName } from '#domain/stats/histogram';

/**
 * The counters of a project-minute, by name: the request figures (`requests_total`, `requests_4xx`,
 * `requests_5xx`, `request_latency_sum` and the latency buckets) and the domain figures, named as
 * the metrics that carry them.
 */
export const DOMAIN_COUNTERS = [
  'messages',
  'connections',
  'webhook_delivered',
  'webhook_delivery_failed',
  'push_sent',
  'push_failed',
  'push_delivered',
  'agent_invocations',
  'ai_errors',
] as const;

export const REQUEST_COUNTERS = ['requests_total', 'requests_4xx', 'requests_5xx', 'request_latency_sum'] as const;

export const LATENCY_COUNTERS = Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, index) => latencyBucketName(index));

/** Every counter a stats item may hold. */
export const COUNTER_NAMES: readonly string[] = [...REQUEST_COUNTERS, ...DOMAIN_COUNTERS, ...LATENCY_COUNTERS];
const known = new Set(COUNTER_NAMES);

export type Counters = Record<string, number>;

/** One figure as the feeds deliver it: a project, when (epoch ms) and what it adds. */
export interface Figure {
  readonly projectId: string;
  readonly at: number;
  readonly counts: Readonly<Record<string, number>>;
  /** A request's latency: adds to the sum and to its bucket. */
  readonly latencyMs?: number;
}

export const minuteOf = (epochMs: number) => Math.floor(epochMs / 60_000);

/** Sums figures per project per minute: what one aggregator batch writes, one update per key. */
export function sumByProjectMinute(figures: Iterable<Figure>): Map<string, { projectId: string; minute: number; counters: Counters }> {
  const sums = new Map<string, { projectId: string; minute: number; counters: Counters }>();
  for (const figure of figures) {
    const minute = minuteOf(figure.at);
    const key = `${figure.projectId}\u0000${minute}`;
    let sum = sums.get(key);
    if (!sum) {
      sum = { projectId: figure.projectId, minute, counters: {} };
      sums.set(key, sum);
    }
    for (const [name, value] of Object.entries(figure.counts)) {
      if (!known.has(name) || !Number.isFinite(value) || value === 0) continue;
      sum.counters[name] = (sum.counters[name] ?? 0) + value;
    }
    if (figure.latencyMs !== undefined && Number.isFinite(figure.latencyMs)) {
      const bucket = latencyBucketName(latencyBucket(figure.latencyMs));
      sum.counters[bucket] = (sum.counters[bucket] ?? 0) + 1;
      sum.counters.request_latency_sum = (sum.counters.request_latency_sum ?? 0) + Math.round(figure.latencyMs);
    }
  }
  return sums;
}

/** The latency bucket counts of some counters, in bucket order. */
export const latencyCounts = (counters: Readonly<Counters>) => LATENCY_COUNTERS.map((name) => counters[name] ?? 0);

/** Adds counters into `into`. */
export function addCounters(into: Counters, from: Readonly<Counters>): Counters {
  for (const [name, value] of Object.entries(from)) into[name] = (into[name] ?? 0) + value;
  return into;
}
