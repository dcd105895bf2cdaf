import { describe, expect, it } from 'vitest';
import { sumByProjectMinute } from '#domain/stats/counters';
import { LATENCY_BOUNDS_MS, latencyBucket, percentile } from '#domain/stats/histogram';
import { judgeWindow } from '#domain/stats/rules';
import { healthScore } from '#domain/stats/score';

const objectives = { availability: 0.999, latencyP95Ms: 500 };
/** Counts per bucket with `count` requests in the bucket of `ms`. */
const countsAt = (...entries: [ms: number, count: number][]) => {
  const counts = Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, () => 0);
  for (const [ms, count] of entries) counts[latencyBucket(ms)] = (counts[latencyBucket(ms)] ?? 0) + count;
  return counts;
};

describe('healthScore', () => {
  it('is 100 without traffic, whatever the latency', () => {
    expect(healthScore({ total: 0, serverErrors: 0, latencyP95Ms: null, objectives })).toBe(100);
    expect(healthScore({ total: 0, serverErrors: 0, latencyP95Ms: 9000, objectives })).toBe(100);
  });

  it('is 100 with no error and p95 on the objective', () => {
    expect(healthScore({ total: 1000, serverErrors: 0, latencyP95Ms: 500, objectives })).toBe(100);
  });

  it('keeps only the latency points when every request failed', () => {
    expect(healthScore({ total: 50, serverErrors: 50, latencyP95Ms: 20, objectives })).toBe(30);
  });

  it('loses the availability points in proportion to the error budget spent: half the budget, half of 70', () => {
    // budget 0.001: 1 error in 2,000 requests spends half of it
    expect(healthScore({ total: 2000, serverErrors: 1, latencyP95Ms: 100, objectives })).toBe(65);
    expect(healthScore({ total: 1000, serverErrors: 1, latencyP95Ms: 100, objectives })).toBe(30);
  });

  it('loses latency points as objective / p95 once p95 is over the objective', () => {
    expect(healthScore({ total: 10, serverErrors: 0, latencyP95Ms: 1000, objectives })).toBe(85);
    expect(healthScore({ total: 10, serverErrors: 0, latencyP95Ms: 501, objectives })).toBe(99.9);
  });

  it('judges by the objectives given: a looser availability forgives the same errors', () => {
    const errors = { total: 100, serverErrors: 1, latencyP95Ms: 100 };

    expect(healthScore({ ...errors, objectives })).toBe(30);
    expect(healthScore({ ...errors, objectives: { availability: 0.9, latencyP95Ms: 500 } })).toBe(93);
  });
});

describe('percentile', () => {
  it('is null without a request', () => {
    expect(percentile(countsAt(), 95)).toBeNull();
  });

  it('reads the upper bound of the bucket of a lone request, for every p', () => {
    for (const p of [1, 50, 95, 99, 100]) expect(percentile(countsAt([42, 1]), p)).toBe(50);
  });

  it('takes the bucket of rank ceil(p% of the total): 95 fast and 5 slow, p95 is fast, p96 slow', () => {
    const counts = countsAt([4, 95], [800, 5]);

    expect(percentile(counts, 95)).toBe(5);
    expect(percentile(counts, 96)).toBe(1000);
  });

  it('puts a latency on a bound into that bound’s bucket, and one just above into the next', () => {
    expect(percentile(countsAt([100, 1]), 50)).toBe(100);
    expect(percentile(countsAt([100.5, 1]), 50)).toBe(150);
    expect(percentile(countsAt([0, 1]), 50)).toBe(1);
  });

  it('reads the open bucket above the last bound as that bound', () => {
    expect(percentile(countsAt([120_000, 3]), 99)).toBe(30_000);
  });

  it('never reads below the true value, and from 2 ms up at most 2/3 above it (the widest step, 3 → 5)', () => {
    for (const ms of [2, 3, 3.01, 4, 6, 11, 29, 30.01, 31, 99, 101, 201, 300.5, 499, 501, 1001, 3001, 9999, 29_999]) {
      const read = percentile(countsAt([ms, 1]), 50) as number;
      expect(read, String(ms)).toBeGreaterThanOrEqual(ms);
      expect(read, String(ms)).toBeLessThanOrEqual((ms * 5) / 3);
    }
  });
});

describe('sumByProjectMinute', () => {
  const at = (minute: number, second = 0) => minute * 60_000 + second * 1000;

  it('is empty without figures', () => {
    expect(sumByProjectMinute([]).size).toBe(0);
  });

  it('sums one project-minute into one entry: counts, the latency sum and the latency buckets', () => {
    const sums = [
      ...sumByProjectMinute([
        { projectId: 'p', at: at(10, 1), counts: { requests_total: 1, requests_5xx: 1 }, latencyMs: 12.4 },
        { projectId: 'p', at: at(10, 59), counts: { requests_total: 1 }, latencyMs: 3 },
        { projectId: 'p', at: at(10, 30), counts: { messages: 2 } },
      ]).values(),
    ];

    expect(sums).toEqual([
      {
        projectId: 'p',
        minute: 10,
        counters: {
          requests_total: 2,
          requests_5xx: 1,
          request_latency_sum: 15,
          [`lat_${latencyBucket(12.4)}`]: 1,
          [`lat_${latencyBucket(3)}`]: 1,
          messages: 2,
        },
      },
    ]);
  });

  it('splits at the minute boundary: 59.999 s and 60 s land in neighbouring minutes', () => {
    const sums = sumByProjectMinute([
      { projectId: 'p', at: at(10) + 59_999, counts: { requests_total: 1 } },
      { projectId: 'p', at: at(11), counts: { requests_total: 1 } },
    ]);

    expect([...sums.values()].map((sum) => [sum.minute, sum.counters.requests_total])).toEqual([
      [10, 1],
      [11, 1],
    ]);
  });

  it('keeps projects apart within a minute', () => {
    const sums = sumByProjectMinute([
      { projectId: 'a', at: at(5), counts: { messages: 1 } },
      { projectId: 'b', at: at(5), counts: { messages: 3 } },
      { projectId: 'a', at: at(5, 10), counts: { messages: 1 } },
    ]);

    expect([...sums.values()].map((sum) => [sum.projectId, sum.counters.messages])).toEqual([
      ['a', 2],
      ['b', 3],
    ]);
  });

  it('drops unknown counter names, zeros and values that are not finite, and leaves no entry counters of its own', () => {
    const [sum] = sumByProjectMinute([
      { projectId: 'p', at: at(1), counts: { pk: 1, ttl: 5, bogus: 3, messages: 0, requests_4xx: Number.NaN, push_sent: 2 } },
      { projectId: 'p', at: at(1), counts: {}, latencyMs: Number.POSITIVE_INFINITY },
    ]).values();

    expect(sum?.counters).toEqual({ push_sent: 2 });
  });
});

describe('judgeWindow', () => {
  const verdict = (window: Record<string, number>, rule: string, judged = objectives) =>
    judgeWindow(window, judged).find((candidate) => candidate.rule === rule);

  it('fires nothing without traffic', () => {
    expect(judgeWindow({}, objectives).filter((candidate) => candidate.firing)).toEqual([]);
  });

  it('fires the burn alert on all errors only past the minimum request count', () => {
    expect(verdict({ requests_total: 19, requests_5xx: 19 }, 'error_budget_burn')?.firing).toBe(false);
    expect(verdict({ requests_total: 20, requests_5xx: 20 }, 'error_budget_burn')?.firing).toBe(true);
  });

  it("judges the burn and latency rules by the project's objectives", () => {
    const window = { requests_total: 100, requests_5xx: 2, [`lat_${latencyBucket(800)}`]: 100 };

    expect(verdict(window, 'error_budget_burn')?.firing).toBe(true);
    expect(verdict(window, 'error_budget_burn', { availability: 0.9, latencyP95Ms: 1000 })?.firing).toBe(false);
    expect(verdict(window, 'latency_p95')?.firing).toBe(true);
    expect(verdict(window, 'latency_p95', { availability: 0.9, latencyP95Ms: 1000 })).toMatchObject({ firing: false, threshold: 1000 });
  });
});
