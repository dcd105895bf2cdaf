import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { findWidgetSettings, putWidgetSettings, type WidgetSettingsConfig } from '#shared/db/widget-settings';
import { BadRequestError } from '#shared/errors';

/** Sites one project's widget may be embedded on. */
export const MAX_ALLOWED_ORIGINS = 20;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

/**
 * Whether `value` is a site origin exactly as a browser writes it in `Origin` (`scheme://host[:port]`,
 * lower case, no path, no trailing slash, no default port), so that the check of a request is a
 * string comparison: https, or http for a page on this machine (localhost, 127.0.0.1) only.
 */
export function isSiteOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  return secure && url.origin === value;
}

export interface WidgetSettings extends WidgetSettingsConfig {
  /** `null` while never set. */
  readonly updatedAt: string | null;
}

const NEVER_SET: WidgetSettings = { allowedOrigins: [], supportRoomId: null, updatedAt: null };

/** The project's widget settings; an empty allow-list (no site may start guest sessions) when never set. */
export async function getWidgetSettings(projectId: string): Promise<WidgetSettings> {
  const item = await findWidgetSettings(projectId);
  return item ? { allowedOrigins: item.allowedOrigins, supportRoomId: item.supportRoomId, updatedAt: item.updatedAt } : NEVER_SET;
}

/**
 * Replaces the settings whole. The support room must be a room of the caller's project (404
 * `room_not_found` otherwise, as for any room of another tenant) and not a dm, which keeps exactly
 * its two members and so could never take a guest.
 */
export async function setWidgetSettings(principal: Principal, input: WidgetSettingsConfig): Promise<WidgetSettings> {
  if (input.supportRoomId !== null) {
    const { room } = await accessRoom(principal, input.supportRoomId, { join: false });
    if (room.type === 'dm') {
      throw new BadRequestError('The support room must be a group or public room', [
        { field: 'body.supportRoomId', message: 'names a dm, which takes no guests' },
      ]);
    }
  }
  const item = await putWidgetSettings(principal.projectId, input, new Date().toISOString());
  return { allowedOrigins: item.allowedOrigins, supportRoomId: item.supportRoomId, updatedAt: item.updatedAt };
}
