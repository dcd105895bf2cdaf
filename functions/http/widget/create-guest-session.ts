import { startGuestSession } from '#domain/widget/guest-sessions';
import { created, httpHandler } from '#edge/http';
import { guestSessionBody } from './schemas';

/** 201 with the guest's token, user id, the room entered (if any) and when the token expires. */
export const handler = httpHandler('CreateGuestSession', { body: guestSessionBody }, async ({ body, headers }) =>
  created(await startGuestSession(body, headers.origin)),
);
