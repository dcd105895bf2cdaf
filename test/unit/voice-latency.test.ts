import { describe, expect, it } from 'vitest';
import { bucketOf, bucketUpperMs, quantileMs, windowMinutes } from '#domain/calls/voice-latency';

/** The voice latency histogram: bucket bounds, and percentiles that never read below the samples' own. */

const histogramOf = (latencies: readonly number[]) => {
  const buckets = new Map<number, number>();
  for (const latency of latencies) buckets.set(bucketOf(latency), (buckets.get(bucketOf(latency)) ?? 0) + 1);
  return buckets;
};
/** The exact `q` quantile of the samples, nearest rank. */
const exact = (latencies: readonly number[], q: number) =>
  [...latencies].sort((a, b) => a - b)[Math.ceil(q * latencies.length) - 1] as number;

describe('the latency histogram', () => {
  it('puts each latency in the bucket whose bounds hold it: 10 ms to 1 s, 50 ms to 5 s, 250 ms to 10 s, then one', () => {
    // Assess
    expect([0, 9.9, 10, 299, 300, 999].map(bucketOf)).toEqual([0, 0, 1, 29, 30, 99]);
    expect([1000, 1049, 1050, 4999].map(bucketOf)).toEqual([100, 100, 101, 179]);
    expect([5000, 9999, 10_000, 120_000].map(bucketOf)).toEqual([180, 199, 200, 200]);
    expect([0, 29, 99, 100, 179, 180, 199, 200].map(bucketUpperMs)).toEqual([10, 300, 1000, 1050, 5000, 5250, 10_000, 10_000]);
  });

  it('answers p50 and p95 at most one bucket above the exact values and never below them', () => {
    // Prepare: a spread of samples from 0.5 ms to 3 s
    const latencies = Array.from({ length: 997 }, (_, index) => ((index * 7919) % 3000) + 0.5);
    const buckets = histogramOf(latencies);

    for (const q of [0.5, 0.95]) {
      // Act
      const estimate = quantileMs(buckets, q) as number;

      // Assess
      const truth = exact(latencies, q);
      expect(estimate).toBeGreaterThanOrEqual(truth);
      expect(estimate - truth).toBeLessThanOrEqual(truth < 1000 ? 10 : 50);
    }
  });

  it('has no percentile without samples', () => {
    // Assess
    expect(quantileMs(new Map(), 0.95)).toBeNull();
  });

  it('tells a p95 of exactly the target from one just over it', () => {
    // Prepare: 95 of 100 samples at 290 ms, 5 at 1 s
    const atTarget = histogramOf([...Array(95).fill(290), ...Array(5).fill(1000)]);
    const over = histogramOf([...Array(94).fill(290), ...Array(6).fill(300)]);

    // Assess
    expect(quantileMs(atTarget, 0.95)).toBe(300);
    expect(quantileMs(over, 0.95)).toBe(310);
  });
});

describe('windowMinutes', () => {
  it('reads minutes and hours', () => {
    // Assess
    expect(['1m', '15m', '1h', '24h', '90m'].map(windowMinutes)).toEqual([1, 15, 60, 1440, 90]);
    expect(['0m', '1d', 'h', '1.5h', ''].map(windowMinutes).every(Number.isNaN)).toBe(true);
  });
});
