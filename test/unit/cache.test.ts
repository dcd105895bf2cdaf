import { afterEach, describe, expect, it, vi } from 'vitest';
import { TtlCache } from '#shared/cache';

describe('TtlCache', () => {
  afterEach(() => vi.useRealTimers());

  it('forgets entries after their lifetime', () => {
    vi.useFakeTimers();
    const cache = new TtlCache<number>(1000);
    cache.set('a', 1);
    vi.advanceTimersByTime(999);
    expect(cache.get('a')).toBe(1);
    vi.advanceTimersByTime(2);
    expect(cache.get('a')).toBeUndefined();
  });

  it('drops every key under a prefix and evicts the oldest when full', () => {
    const cache = new TtlCache<number>(60_000, 2);
    cache.set('room|1|alice', 1);
    cache.set('room|1|bob', 2);
    cache.set('room|2|alice', 3);
    expect(cache.get('room|1|alice')).toBeUndefined();
    cache.deletePrefix('room|1|');
    expect(cache.get('room|1|bob')).toBeUndefined();
    expect(cache.get('room|2|alice')).toBe(3);
  });

  it('caches nothing with a zero lifetime', () => {
    const cache = new TtlCache<number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});
