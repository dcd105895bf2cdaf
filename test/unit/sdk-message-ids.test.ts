import { describe, expect, it } from 'vitest';
import { RESUME_OVERLAP, SeenIds } from '../../sdk/message-ids';

/** Message ids as the service makes them: `createdAtMs × 1000 + slot`. */
const idAt = (ms: number, slot = 0) => ms * 1000 + slot;
const T = 1_763_800_000_000;
const m = (id: number) => ({ id });

describe('message id de-duplication', () => {
  it('passes each id once, across batches, oldest first within a batch', () => {
    // Prepare
    const seen = new SeenIds();

    // Act
    const first = seen.accept([m(idAt(T, 2)), m(idAt(T, 0)), m(idAt(T, 1))]);
    const second = seen.accept([m(idAt(T, 1)), m(idAt(T + 1)), m(idAt(T, 2))]);
    const third = seen.accept([m(idAt(T + 1))]);

    // Assess
    expect(first.map((message) => message.id)).toEqual([idAt(T, 0), idAt(T, 1), idAt(T, 2)]);
    expect(second.map((message) => message.id)).toEqual([idAt(T + 1)]);
    expect(third).toEqual([]);
  });

  it('counts a duplicate inside one batch once', () => {
    // Prepare
    const seen = new SeenIds();

    // Act
    const fresh = seen.accept([m(idAt(T)), m(idAt(T)), m(idAt(T))]);

    // Assess
    expect(fresh).toHaveLength(1);
  });

  it('still delivers an older id that lands late, once', () => {
    // Prepare
    const seen = new SeenIds();
    seen.accept([m(idAt(T + 3000))]);

    // Act
    const late = seen.accept([m(idAt(T + 1000)), m(idAt(T + 3000))]);
    const again = seen.accept([m(idAt(T + 1000))]);

    // Assess
    expect(late.map((message) => message.id)).toEqual([idAt(T + 1000)]);
    expect(again).toEqual([]);
    expect(seen.lastSeenId).toBe(idAt(T + 3000));
  });

  it('skips entries without a numeric id', () => {
    // Prepare
    const seen = new SeenIds();

    // Act
    const fresh = seen.accept([{ id: '5' as unknown as number }, m(6)]);

    // Assess
    expect(fresh).toEqual([m(6)]);
  });

  it('resumes five seconds of ids before the newest one seen', () => {
    // Prepare
    const seen = new SeenIds();
    seen.accept([m(idAt(T, 7)), m(idAt(T - 60_000))]);

    // Act
    const after = seen.resumeAfter();

    // Assess
    expect(RESUME_OVERLAP).toBe(5_000_000);
    expect(after).toBe(idAt(T - 5000, 7));
  });

  it('has no resume point before a start, and never a negative one', () => {
    // Prepare
    const fresh = new SeenIds();
    const empty = new SeenIds();
    empty.startAt(0);

    // Act & Assess
    expect(fresh.resumeAfter()).toBeUndefined();
    expect(empty.resumeAfter()).toBe(0);
  });

  it('remembers a bounded window: ids ten minutes older than the newest are forgotten', () => {
    // Prepare
    const seen = new SeenIds();
    const old = Array.from({ length: 1500 }, (_, slot) => m(idAt(T, slot % 1000) + Math.floor(slot / 1000) * 1000));

    // Act
    seen.accept(old);
    seen.accept(Array.from({ length: 1000 }, (_, slot) => m(idAt(T + 11 * 60_000, slot))));

    // Assess
    expect(seen.size).toBe(1000);
    expect(seen.horizon).toBe(idAt(T + 60_000, 999));
    expect(seen.has(idAt(T + 11 * 60_000, 999))).toBe(true);
  });

  it('never delivers a forgotten id again: ids at or below the forget horizon count as seen', () => {
    // Prepare: a busy session (over 2,000 ids), then a quiet one eleven minutes later
    const seen = new SeenIds();
    const busy = Array.from({ length: 2001 }, (_, index) => m(idAt(T + Math.floor(index / 10), index % 10)));
    seen.accept(busy);
    seen.accept([m(idAt(T + 11 * 60_000))]);

    // Act: a replay (a server history frame, a catch-up page) brings old ids again, and one never seen below the horizon
    const replayed = seen.accept([...busy.slice(-20), m(idAt(T + 100, 500)), m(idAt(T + 11 * 60_000, 1))]);

    // Assess
    expect(seen.horizon).toBe(idAt(T + 60_000));
    expect(replayed.map((message) => message.id)).toEqual([idAt(T + 11 * 60_000, 1)]);
    expect(seen.has(idAt(T, 0))).toBe(true);
    expect(seen.size).toBe(2);
  });

  it('has no horizon before it forgets, so the first window and late ids pass', () => {
    // Prepare
    const seen = new SeenIds();
    seen.accept([m(idAt(T + 30 * 60_000))]);

    // Act: an id half an hour older lands late (a backdated import broadcast live)
    const late = seen.accept([m(idAt(T))]);

    // Assess
    expect(seen.horizon).toBeUndefined();
    expect(late).toEqual([m(idAt(T))]);
  });
});
