import type { RoomAccess } from '#domain/rooms/rooms';
import { hasRole, type Principal } from '#shared/auth';

/**
 * Who moderates a room's messages (deletes others' messages, pins and unpins): the room's owner,
 * the project's moderators and above, and the API key.
 */
export const canModerateRoom = (principal: Principal, access: RoomAccess): boolean =>
  principal.kind === 'service' || hasRole(principal, 'moderator') || access.membership?.role === 'owner';
