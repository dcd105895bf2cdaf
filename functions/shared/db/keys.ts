/**
 * Key builders. Every key begins with the project id taken from the verified credential, so a
 * request can only ever address its own tenant's items. Ids are validated upstream to exclude `#`.
 */
export const projectPk = (projectId: string) => `P#${projectId}`;
export const roomPk = (projectId: string, roomId: string) => `P#${projectId}#R#${roomId}`;
export const roomMessagesPk = (projectId: string, roomId: string) => `P#${projectId}#R#${roomId}#MSGS`;
export const userPk = (projectId: string, userId: string) => `P#${projectId}#U#${userId}`;

/** Message sort keys are zero-padded so lexical order is numeric order. */
export const MESSAGE_ID_DIGITS = 16;
/**
 * Sort key prefixes of the items whose insertion carries domain events to the table stream's
 * consumer (`lib/routes/events.ts` filters on them): a message is its own `message.created`, an
 * outbox item holds an event written beside the change it announces.
 */
export const MESSAGE_SK_PREFIX = 'MSG#';
export const OUTBOX_SK_PREFIX = 'EVT#';
export const messageSk = (messageId: number) => `${MESSAGE_SK_PREFIX}${String(messageId).padStart(MESSAGE_ID_DIGITS, '0')}`;
