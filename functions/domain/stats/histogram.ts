/**
 * Latency histograms: a request's latency counts in the first bucket whose upper bound (ms) holds
 * it; the last bucket is open. From 2 ms up a bound is at most 5/3 of the one before (3 → 5, 30 → 50...),
 * so a percentile read from the buckets (the upper bound of the bucket its rank falls in) is never
 * below the true value and less than 67 % above it. Buckets add up across minutes, which exact
 * percentiles would not.
 */
export const LATENCY_BOUNDS_MS = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10_000, 15_000, 20_000, 30_000,
] as const;

/** The counter name of bucket `index` in a stats item (`lat_0` … `lat_27`, the last one open). */
export const latencyBucketName = (index: number) => `lat_${index}`;

export function latencyBucket(latencyMs: number): number {
  const index = LATENCY_BOUNDS_MS.findIndex((bound) => latencyMs <= bound);
  return index === -1 ? LATENCY_BOUNDS_MS.length : index;
}

/**
 * The `p`-th percentile (0 < p ≤ 100) of the counts per bucket: the upper bound of the bucket holding
 * the rank `ceil(p% of the total)`; `null` without a request. A rank in the open bucket reads as its lower bound.
 */
export function percentile(counts: readonly number[], p: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let index = 0; index < counts.length; index++) {
    seen += counts[index] ?? 0;
    if (seen >= rank) return LATENCY_BOUNDS_MS[index] ?? (LATENCY_BOUNDS_MS.at(-1) as number);
  }
  return LATENCY_BOUNDS_MS.at(-1) as number;
}
