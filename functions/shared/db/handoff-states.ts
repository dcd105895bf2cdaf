/**
 * The states of a room's handoff: the handoff item's `state` and the `handoff` event's. Apart from
 * the entity (`./handoff`) because the event catalogue needs them, and it is loaded by the local
 * runtime before the table is bound: importing the entity would load the DynamoDB client, which
 * reads its table binding once, at import.
 */
export const HANDOFF_STATES = ['human_active', 'completed'] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];
