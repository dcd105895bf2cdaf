/**
 * Message ids are `createdAtMs × 1000 + slot`, so 5,000,000 is five seconds of ids. A writer that
 * took its id a moment before another can store it a moment after, so a resume asks again from
 * this far before the newest id seen, and de-duplication drops what was already delivered.
 */
export const RESUME_OVERLAP = 5_000_000;

/**
 * Ids delivered long before the newest one are forgotten, to bound memory: ten minutes of ids. A
 * forgotten id may still come again (a server `history` frame or any replay that reaches back that
 * far), so everything at or below the forget horizon counts as seen.
 */
const FORGET_AFTER = 600_000_000;

/** The set is pruned once it holds more ids than this. */
const REMEMBER_AT_MOST = 2_000;

/**
 * Which message ids were delivered, and where to resume. `accept` takes any batch (a live frame, a
 * `history` frame, a REST page, an SSE event) and returns the messages not delivered before, in id
 * order, remembering them: each id passes exactly once.
 */
export class SeenIds {
  private readonly ids = new Set<number>();
  private newest: number | undefined;
  private forgotten: number | undefined;

  /** The newest id delivered, or `undefined` before the first. */
  get lastSeenId(): number | undefined {
    return this.newest;
  }

  /** How many ids are remembered (bounded: old ones are forgotten). */
  get size(): number {
    return this.ids.size;
  }

  /**
   * The forget horizon: ids at or below it were forgotten or are too old to deliver, and count as
   * seen. `undefined` until the set first grew past 2,000 ids (the first window always passes).
   */
  get horizon(): number | undefined {
    return this.forgotten;
  }

  /** Whether `id` counts as seen: delivered and remembered, or at or below the forget horizon. */
  has(id: number): boolean {
    return (this.forgotten !== undefined && id <= this.forgotten) || this.ids.has(id);
  }

  /** The messages of `batch` not delivered before, oldest first; duplicates inside the batch count once. */
  accept<T extends { readonly id: number }>(batch: readonly T[]): T[] {
    const fresh: T[] = [];
    for (const message of [...batch].sort((a, b) => a.id - b.id)) {
      if (typeof message.id !== 'number' || this.has(message.id)) continue;
      this.ids.add(message.id);
      if (this.newest === undefined || message.id > this.newest) this.newest = message.id;
      fresh.push(message);
    }
    if (this.ids.size > REMEMBER_AT_MOST) this.forget();
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
    const horizon = Math.max(this.forgotten ?? 0, this.newest - FORGET_AFTER);
    this.forgotten = horizon;
    for (const id of this.ids) if (id <= horizon) this.ids.delete(id);
  }
}
