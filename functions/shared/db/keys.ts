import { MESSAGE_SK_PREFIX, OUTBOX_SK_PREFIX } from '#wiring/table';

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
export { MESSAGE_SK_PREFIX, OUTBOX_SK_PREFIX };
export const messageSk = (messageId: number) => `${MESSAGE_SK_PREFIX}${String(messageId).padStart(MESSAGE_ID_DIGITS, '0')}`;
