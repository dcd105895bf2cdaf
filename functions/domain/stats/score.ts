import { percentile } from '#domain/stats/histogram';

/** What a project is held to: the share of requests that must not fail (5xx), and the latency p95 must stay under. */
export interface Objectives {
  /** 0 < availability < 1, e.g. 0.999. */
  readonly availability: number;
  readonly latencyP95Ms: number;
}

export interface SloReport {
  readonly requests_total: number;
  readonly requests_error: number;
  readonly requests_4xx: number;
  /** 1 − 5xx / total; `null` without a request. */
  readonly availability: number | null;
  readonly latency_p50_ms: number | null;
  readonly latency_p95_ms: number | null;
  readonly latency_p99_ms: number | null;
  /** 0–100: see {@link healthScore}. */
  readonly score: number;
  readonly objectives: Objectives;
}

/**
 * The health score, 0–100: 70 points for availability and 30 for latency.
 * - availability points = 70 × max(0, 1 − errorRate / errorBudget), where errorRate = 5xx / requests and
 *   errorBudget = 1 − availability objective: full marks with no error, none once the errors spend
 *   the whole budget of the window.
 * - latency points = 30 × min(1, objective / p95): full marks while p95 meets the objective, falling
 *   in proportion as it exceeds it.
 * Without a request the score is 100 (nothing failed). Client errors (4xx) are the caller's and cost nothing.
 */
export function healthScore(input: {
  readonly total: number;
  readonly serverErrors: number;
  readonly latencyP95Ms: number | null;
  readonly objectives: Objectives;
}): number {
  if (input.total <= 0) return 100;
  const budget = 1 - input.objectives.availability;
  const errorRate = input.serverErrors / input.total;
  const availabilityPoints = 70 * Math.max(0, 1 - errorRate / budget);
  const p95 = input.latencyP95Ms ?? 0;
  const latencyPoints = p95 <= input.objectives.latencyP95Ms ? 30 : 30 * (input.objectives.latencyP95Ms / p95);
  return Math.round((availabilityPoints + latencyPoints) * 10) / 10;
}

export function sloReport(
  totals: { requests_total: number; requests_4xx: number; requests_5xx: number },
  latency: readonly number[],
  objectives: Objectives,
): SloReport {
  const p95 = percentile(latency, 95);
  return {
    requests_total: totals.requests_total,
    requests_error: totals.requests_5xx,
    requests_4xx: totals.requests_4xx,
    availability: totals.requests_total > 0 ? 1 - totals.requests_5xx / totals.requests_total : null,
    latency_p50_ms: percentile(latency, 50),
    latency_p95_ms: p95,
    latency_p99_ms: percentile(latency, 99),
    score: healthScore({ total: totals.requests_total, serverErrors: totals.requests_5xx, latencyP95Ms: p95, objectives }),
    objectives,
  };
}
