/**
 * How a stored message changed after it was sent, as `message.updated` names it. Constants only,
 * for the event catalogue to read at load time (importing `./message`, which has operations, would
 * bind the table name too early).
 */
export const MESSAGE_CHANGES = ['edited', 'deleted', 'reaction_added', 'reaction_removed', 'pinned', 'unpinned', 'transcribed'] as const;
export type MessageChange = (typeof MESSAGE_CHANGES)[number];
