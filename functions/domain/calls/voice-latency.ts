import {
  addLatencySamples,
  type LatencyHistogram,
  latencyHistogramsBetween,
  VOICE_LATENCY_KINDS,
  type VoiceLatencyKind,
} from '#shared/db/voice-latency';

/**
 * Client-measured voice AI latencies against the spec's product targets (INTERFACE.md, Limits):
 * realtime path P95 ≤ 300 ms, chunked REST P95 ≤ 500 ms, barge-in ≤ 500 ms (held at P95 too).
 * Samples are counted into fixed histogram buckets per kind and minute as they arrive (no sample is
 * stored), so a percentile is the upper bound of the bucket it falls in: never below the truth,
 * and at most one bucket's width (10 ms under 1 s) above it.
 */
export const VOICE_TARGETS_P95_MS: Readonly<Record<VoiceLatencyKind, number>> = { realtime: 300, chunked_rest: 500, barge_in: 500 };
export const MAX_LATENCY_MS = 120_000;
export const MAX_SAMPLES_PER_REQUEST = 100;
/** The longest window `GET /admin/voice-ai/stats` reads (1,440 minutes × 3 kinds at most). */
export const MAX_WINDOW_MINUTES = 1440;
/** Minute histograms are kept a day past the longest window. */
const RETENTION_SECONDS = 2 * 86_400;

/** Bucket bounds: 10 ms wide up to 1 s, 50 ms up to 5 s, 250 ms up to 10 s, then one bucket for the rest. */
const SEGMENTS = [
  { from: 0, width: 10, count: 100 },
  { from: 1000, width: 50, count: 80 },
  { from: 5000, width: 250, count: 20 },
] as const;
const OVERFLOW_BUCKET = SEGMENTS.reduce((total, segment) => total + segment.count, 0);
const OVERFLOW_FROM_MS = 10_000;

export function bucketOf(latencyMs: number): number {
  let first = 0;
  for (const segment of SEGMENTS) {
    if (latencyMs < segment.from + segment.width * segment.count) return first + Math.floor((latencyMs - segment.from) / segment.width);
    first += segment.count;
  }
  return OVERFLOW_BUCKET;
}

/** The bucket's upper bound (exclusive); the overflow bucket reports its lower bound, 10 s. */
export function bucketUpperMs(bucket: number): number {
  let first = 0;
  for (const segment of SEGMENTS) {
    if (bucket < first + segment.count) return segment.from + (bucket - first + 1) * segment.width;
    first += segment.count;
  }
  return OVERFLOW_FROM_MS;
}

/** The `q` quantile (0 < q ≤ 1) of merged bucket counts: the upper bound of the bucket holding the rank ⌈q·n⌉. */
export function quantileMs(buckets: ReadonlyMap<number, number>, q: number): number | null {
  const total = [...buckets.values()].reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [bucket, count] of [...buckets].sort(([a], [b]) => a - b)) {
    seen += count;
    if (seen >= rank) return bucketUpperMs(bucket);
  }
  return null;
}

/** `2026-11-27T08:15`: the minute an instant falls in, as the histograms' sort keys name it. */
const minuteOf = (instant: number) => new Date(instant).toISOString().slice(0, 16);

export interface LatencySample {
  readonly kind: VoiceLatencyKind;
  readonly latencyMs: number;
}

/**
 * `POST /admin/voice-ai/metrics`: counts the samples into this minute's histogram of each kind,
 * one write per kind present (three at most, whatever the batch's size).
 */
export async function recordVoiceLatencies(projectId: string, samples: readonly LatencySample[], now = Date.now()) {
  const minute = minuteOf(now);
  const byKind = new Map<VoiceLatencyKind, Map<number, number>>();
  for (const sample of samples) {
    const buckets = byKind.get(sample.kind) ?? new Map<number, number>();
    const bucket = bucketOf(sample.latencyMs);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    byKind.set(sample.kind, buckets);
  }
  const ttl = Math.floor(now / 1000) + RETENTION_SECONDS;
  await Promise.all([...byKind].map(([kind, buckets]) => addLatencySamples(projectId, { kind, minute, buckets }, ttl)));
  return { recorded: samples.length };
}

/** A window as the route takes it: `15m`, `1h`, `24h`. */
export const WINDOW_PATTERN = /^([1-9]\d{0,3})([mh])$/;
export const windowMinutes = (window: string): number => {
  const match = WINDOW_PATTERN.exec(window);
  if (!match) return Number.NaN;
  return Number(match[1]) * (match[2] === 'h' ? 60 : 1);
};

function statsOf(kind: VoiceLatencyKind, histograms: readonly LatencyHistogram[]) {
  const merged = new Map<number, number>();
  let count = 0;
  for (const histogram of histograms) {
    if (histogram.kind !== kind) continue;
    count += histogram.count;
    for (const [bucket, samples] of histogram.buckets) merged.set(bucket, (merged.get(bucket) ?? 0) + samples);
  }
  const p95Ms = quantileMs(merged, 0.95);
  const targetP95Ms = VOICE_TARGETS_P95_MS[kind];
  return { count, p50Ms: quantileMs(merged, 0.5), p95Ms, targetP95Ms, met: p95Ms === null ? null : p95Ms <= targetP95Ms };
}

/** `GET /admin/voice-ai/stats?window=`: per kind, the count, p50 and p95 of the window's minutes, the target and whether it is met (`null` without samples). */
export async function voiceLatencyStats(projectId: string, window: string, now = Date.now()) {
  const minutes = windowMinutes(window);
  const from = minuteOf(now - (minutes - 1) * 60_000);
  const to = minuteOf(now);
  const histograms = await latencyHistogramsBetween(projectId, from, to);
  return {
    window,
    from: `${from}:00.000Z`,
    to: new Date(now).toISOString(),
    resolution: 'p50 and p95 are the upper bounds of 10 ms buckets under 1 s, 50 ms under 5 s, 250 ms under 10 s; 10000 means 10 s or more',
    kinds: Object.fromEntries(VOICE_LATENCY_KINDS.map((kind) => [kind, statsOf(kind, histograms)])),
  };
}
