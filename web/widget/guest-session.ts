import type { WidgetSettings } from './settings';

/** `POST /auth/guest`'s answer: a short-lived guest token bound to this page's origin. */
export interface GuestSession {
  readonly token: string;
  readonly userId: string;
  readonly roomId: string;
  readonly expiresAt: string;
}

/**
 * Opens a guest session for this page. The browser sends the page's `Origin` itself, and the
 * service refuses an origin the project did not allow, or a project whose `embed_widget` flag is
 * off: `undefined` then, and the widget takes itself off the page.
 */
export async function startGuestSession(settings: WidgetSettings): Promise<GuestSession | undefined> {
  let response: Response;
  try {
    response = await fetch(`${settings.baseUrl}/auth/guest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ projectId: settings.projectId, roomId: settings.room }),
      credentials: 'omit',
    });
  } catch {
    // A CORS refusal looks like a network error from inside the page.
    return undefined;
  }
  if (response.status !== 201) return undefined;
  const body = (await response.json()) as Partial<GuestSession>;
  if (typeof body.token !== 'string' || typeof body.userId !== 'string') return undefined;
  return {
    token: body.token,
    userId: body.userId,
    roomId: typeof body.roomId === 'string' ? body.roomId : settings.room,
    expiresAt: typeof body.expiresAt === 'string' ? body.expiresAt : '',
  };
}
