/** Sub-millisecond slots per millisecond; ids are `createdAtMs * 1000 + slot`. */
export const ID_SLOTS_PER_MS = 1000;

const lastIdByRoom = new Map<string, number>();

/**
 * The id for a message created at `createdAtMs`. A random slot spreads writers in other instances;
 * within this instance ids of a room only ever increase, so sequential sends keep their order even
 * inside one millisecond. Collisions are settled by the conditional put (see `nextSlot`).
 */
export function messageIdFor(roomKey: string, createdAtMs: number, live: boolean): number {
  let id = createdAtMs * ID_SLOTS_PER_MS + Math.floor(Math.random() * ID_SLOTS_PER_MS);
  if (live) {
    const last = lastIdByRoom.get(roomKey) ?? 0;
    if (id <= last) id = last + 1;
    if (lastIdByRoom.size > 10_000) lastIdByRoom.clear();
    lastIdByRoom.set(roomKey, id);
  }
  return id;
}

/** The next candidate after a collision: the following slot. */
export const nextSlot = (id: number) => id + 1;

export const createdAtMsOf = (messageId: number) => Math.floor(messageId / ID_SLOTS_PER_MS);
