import { issueCallToken } from '#domain/calls/call-token';
import { httpHandler, ok } from '#edge/http';
import { callTokenBody } from './schemas';

/** 200 with the token (`stub: true` without call-server settings); 404 room_not_found, 403 not_a_member. */
export const handler = httpHandler('CreateCallToken', { body: callTokenBody }, async ({ body, user }) =>
  ok(await issueCallToken(user, body.roomId)),
);
