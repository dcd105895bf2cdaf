import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, parseBackoff } from '../../sdk/backoff';

const curves = [
  { variant: 'the default 1 s / 8 s curve', settings: DEFAULT_BACKOFF, ceilings: [1000, 2000, 4000, 8000, 8000, 8000] },
  {
    variant: 'the fluxy 500 ms / 20 s curve',
    settings: { baseBackoffMs: 500, maxBackoffMs: 20_000 },
    ceilings: [500, 1000, 2000, 4000, 8000, 16_000, 20_000, 20_000],
  },
];

describe.each(curves)('backoff on $variant', ({ settings, ceilings }) => {
  it.each(ceilings.map((ceiling, attempt) => ({ attempt, ceiling })))('attempt $attempt stays in [0, $ceiling)', ({ attempt, ceiling }) => {
    // Act
    const lowest = backoffDelay(attempt, settings, () => 0);
    const highest = backoffDelay(attempt, settings, () => 0.999_999);
    const sampled = Array.from({ length: 500 }, () => backoffDelay(attempt, settings));

    // Assess
    expect(lowest).toBe(0);
    expect(highest).toBe(ceiling - 1);
    for (const delay of sampled) {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(ceiling);
    }
  });

  it('spreads clients over the whole window (full jitter)', () => {
    // Act
    const sampled = Array.from({ length: 2000 }, () => backoffDelay(3, settings));

    // Assess
    const ceiling = ceilings[3] as number;
    expect(Math.min(...sampled)).toBeLessThan(ceiling * 0.1);
    expect(Math.max(...sampled)).toBeGreaterThan(ceiling * 0.9);
    expect(new Set(sampled).size).toBeGreaterThan(100);
  });

  it('never exceeds the maximum, even after thousands of attempts', () => {
    // Act
    const delays = [40, 1000, 1e6, Number.MAX_SAFE_INTEGER].map((attempt) => backoffDelay(attempt, settings, () => 0.999_999));

    // Assess
    for (const delay of delays) {
      expect(Number.isFinite(delay)).toBe(true);
      expect(delay).toBeLessThan(settings.maxBackoffMs);
    }
  });
});

describe('the reconnectBackoff of the feature flags', () => {
  it('is read from the answer', () => {
    // Act
    const settings = parseBackoff({ flags: {}, flagship: true, reconnectBackoff: { baseBackoffMs: 500, maxBackoffMs: 20000 } });

    // Assess
    expect(settings).toEqual({ baseBackoffMs: 500, maxBackoffMs: 20000 });
  });

  it.each([
    { variant: 'missing', body: { flags: {} } },
    { variant: 'not numbers', body: { reconnectBackoff: { baseBackoffMs: '1000', maxBackoffMs: 8000 } } },
    { variant: 'negative', body: { reconnectBackoff: { baseBackoffMs: -1, maxBackoffMs: 8000 } } },
    { variant: 'a max below the base', body: { reconnectBackoff: { baseBackoffMs: 9000, maxBackoffMs: 8000 } } },
    { variant: 'no body', body: undefined },
  ])('is ignored when $variant', ({ body }) => {
    expect(parseBackoff(body)).toBeUndefined();
  });
});
