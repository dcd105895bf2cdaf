import { flagEnabled } from '#domain/flags/feature-flags';
import { accessRoom, ensureMember } from '#domain/rooms/rooms';
import { loadProject, signUserToken, type UserPrincipal } from '#shared/auth';
import { config } from '#shared/config';
import { findWidgetSettings } from '#shared/db/widget-settings';
import { ForbiddenError, NotFoundError } from '#shared/errors';
import { newGuestUserId } from '#shared/ids';

/** What `data-room="support"` names: the project's configured support room. */
export const SUPPORT_ROOM_ALIAS = 'support';

export interface GuestSession {
  readonly token: string;
  readonly userId: string;
  readonly roomId?: string;
  readonly expiresAt: string;
}

/**
 * A guest session for the embed widget: a short-lived token with the `guest` role alone, a user id
 * of its own (`guest_…`, drawn at random) and the page's origin, to which the token is bound
 * (`authenticateToken`). Only pages of the project's allowed origins get one, and only while
 * `embed_widget` is on for it.
 *
 * A room asked for is entered now: the support room (by id or as `support`) takes the guest as a
 * room guest whatever its type, since the project chose it for visitors; a public room is joined
 * as any guest-only token joins it; a private room refuses (403 `not_a_member`), and so does
 * everything else a guest might try later (the e2e key, creating rooms, the admin routes), by the
 * rules every token meets.
 */
export async function startGuestSession(
  input: { projectId: string; roomId?: string; name?: string },
  origin: string | undefined,
): Promise<GuestSession> {
  const { projectId } = input;
  const project = await loadProject(projectId);
  if (!project) throw new NotFoundError('project_not_found', 'No such project');
  if (!(await flagEnabled(projectId, 'embed_widget'))) {
    throw new ForbiddenError('The embed_widget feature is turned off for this project', 'feature_disabled');
  }
  const settings = await findWidgetSettings(projectId);
  if (origin === undefined || !settings?.allowedOrigins.includes(origin)) {
    throw new ForbiddenError(
      origin === undefined
        ? 'Guest sessions are started from a web page: the request has no Origin header'
        : `${origin} is not one of the project's widget origins (PUT /admin/widget)`,
      'origin_not_allowed',
    );
  }

  const guest: UserPrincipal = { kind: 'user', projectId, userId: newGuestUserId(), roles: ['guest'], origin };
  const roomId = input.roomId === SUPPORT_ROOM_ALIAS ? supportRoomOf(settings.supportRoomId) : input.roomId;
  if (roomId !== undefined) await enterRoom(guest, roomId, settings.supportRoomId);

  const claims = { projectId, userId: guest.userId, roles: guest.roles, origin, name: input.name };
  const issued = await signUserToken(project, claims, config.GUEST_TOKEN_TTL_SECONDS);
  return { token: issued.token, userId: guest.userId, ...(roomId === undefined ? {} : { roomId }), expiresAt: issued.expiresAt };
}

function supportRoomOf(supportRoomId: string | null): string {
  if (supportRoomId === null) throw new NotFoundError('support_room_not_set', 'The project has no support room (PUT /admin/widget)');
  return supportRoomId;
}

async function enterRoom(guest: UserPrincipal, roomId: string, supportRoomId: string | null): Promise<void> {
  if (roomId !== supportRoomId) {
    await accessRoom(guest, roomId, { join: true });
    return;
  }
  // The room may have gone since it was configured: no membership of a room that is not there.
  await accessRoom({ kind: 'service', projectId: guest.projectId }, roomId, { join: false });
  await ensureMember(guest.projectId, roomId, guest.userId, 'guest');
}
