/**
 * Message ids are `createdAtMs × 1000 + slot`, so 5,000,000 is five seconds of ids. A writer that
 * took its id a moment before another can store it a moment after, so a resume asks again from
 * this far before the newest id seen, and de-duplication drops what was already delivered.
 */
export const RESUME_OVERLAP = 5_000_000;

/**
 * Ids delivered long before the newest one are forgotten: no resume asks that far back, so they
 * cannot come again. Ten minutes of ids.
 */
const FORGET_AFTER = 600_000_000;

/**
 * Which message ids were delivered, and where to resume. `accept` takes any batch (a live frame, a
 * `history` frame, a REST page, an SSE event) and returns the messages not delivered before, in id
 * order, remembering them: each id passes exactly once.
 */
export class SeenIds {
  private readonly ids = new Set<number>();
  private newest: number | undefined;

  /** The newest id delivered, or `undefined` before the first. */
  get lastSeenId(): number | undefined {
    return this.newest;
  }

  /** How many ids are remembered (bounded: old ones are forgotten). */
  get size(): number {
    return this.ids.size;
  }

  has(id: number): boolean {
    return this.ids.has(id);
  }

  /** The messages of `batch` not delivered before, oldest first; duplicates inside the batch count once. */
  accept<T extends { readonly id: number }>(batch: readonly T[]): T[] {
    const fresh: T[] = [];
    for (const message of [...batch].sort((a, b) => a.id - b.id)) {
      if (typeof message.id !== 'number' || this.ids.has(message.id)) continue;
      this.ids.add(message.id);
      if (this.newest === undefined || message.id > this.newest) this.newest = message.id;
      fresh.push(message);
    }
    if (this.ids.size > 2_000) this.forget();
    return fresh;
  }

  /** Marks a starting point without delivering anything (the room's newest id, or 0 for an empty room). */
  startAt(id: number): void {
    if (this.newest === undefined || id > this.newest) this.newest = id;
  }

  /** The `after` cursor for a resume: `lastSeenId - overlap`, never negative; `undefined` before any start. */
  resumeAfter(overlap = RESUME_OVERLAP): number | undefined {
    return this.newest === undefined ? undefined : Math.max(0, this.newest - overlap);
  }

  private forget(): void {
    if (this.newest === undefined) return;
    const horizon = this.newest - FORGET_AFTER;
    for (const id of this.ids) if (id < horizon) this.ids.delete(id);
  }
}
