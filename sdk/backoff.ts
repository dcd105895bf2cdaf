/** The reconnect curve, as `GET /client/feature-flags` answers it in `reconnectBackoff`. */
export interface BackoffSettings {
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** The service's default curve ("1 s / 8 s"), used until (or when) the feature flags cannot be read. */
export const DEFAULT_BACKOFF: BackoffSettings = { baseBackoffMs: 1000, maxBackoffMs: 8000 };

/**
 * Exponential backoff with full jitter: a uniform delay in `[0, min(maxBackoffMs, baseBackoffMs · 2^attempt))`.
 * Jitter over the whole window spreads a crowd of clients that lost the same server, so they do not
 * come back in lock-step. `attempt` counts from 0 (the first retry).
 *
 * @param random a uniform source in `[0, 1)` @default Math.random
 */
export function backoffDelay(attempt: number, settings: BackoffSettings = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const base = Math.max(0, settings.baseBackoffMs);
  const max = Math.max(base, settings.maxBackoffMs);
  // 2^31 already exceeds any sane cap; bounding the exponent keeps the product finite.
  const ceiling = Math.min(max, base * 2 ** Math.min(Math.max(0, Math.floor(attempt)), 31));
  return Math.floor(random() * ceiling);
}

/** Reads `reconnectBackoff` from a feature-flags answer, or `undefined` when it is not a valid curve. */
export function parseBackoff(body: unknown): BackoffSettings | undefined {
  const curve = (body as { reconnectBackoff?: Partial<BackoffSettings> } | null)?.reconnectBackoff;
  const base = curve?.baseBackoffMs;
  const max = curve?.maxBackoffMs;
  if (typeof base !== 'number' || typeof max !== 'number' || !Number.isFinite(base) || !Number.isFinite(max)) return undefined;
  if (base < 0 || max < base) return undefined;
  return { baseBackoffMs: base, maxBackoffMs: max };
}
