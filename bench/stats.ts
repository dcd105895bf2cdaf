/** Small statistics helpers shared by the benchmark modules. */

export const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

export const mean = (values: readonly number[]): number => (values.length ? sum(values) / values.length : Number.NaN);

/** Nearest-rank percentile (`p` in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** Rounds for reports: keeps JSON and Markdown free of float noise. */
export const round = (value: number, digits = 2): number => {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
};

/** How often each value occurs, most frequent first: `[[3, 198], [5, 2]]`. */
export function histogram(values: readonly number[]): [number, number][] {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
