import type { Message } from './types.js';

/** Messages arrive over three transports and REST; each takes them through these guards, so a malformed entry is dropped the same way everywhere. */
export const isMessage = (value: unknown): value is Message => typeof (value as Message | null)?.id === 'number';

/** The messages of a list that arrived over the wire; anything else (not a list, malformed entries) is dropped. */
export const messagesIn = (value: unknown): Message[] => (Array.isArray(value) ? value.filter(isMessage) : []);
