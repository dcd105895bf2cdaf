import { saveConnection } from '#domain/realtime/connections';
import { accessRoom } from '#domain/rooms/rooms';
import { authenticateToken } from '#shared/auth';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '#shared/errors';
import { idSchema } from '#shared/ids';
import { wsHandler } from '#shared/ws';

/**
 * `GET /ws/rooms/<roomId>?token=<JWT>`: the token arrives in the query string because browsers cannot
 * set headers on a WebSocket. Expired or bad tokens get 401, non-members 403, and no upgrade.
 */
export const handler = wsHandler('$connect', async (event) => {
  const query = event.queryStringParameters ?? {};
  if (!query.token) throw new UnauthorizedError('missing_credentials', 'The token query parameter is required');
  const principal = await authenticateToken(query.token);
  const roomId = idSchema.safeParse(query.roomId);
  if (!roomId.success) throw new BadRequestError('A valid roomId is required');
  const { membership } = await accessRoom(principal, roomId.data, { join: true });
  if (!membership) throw new ForbiddenError('Only room members may connect', 'not_a_member');
  await saveConnection({
    projectId: principal.projectId,
    roomId: roomId.data,
    userId: principal.userId,
    roles: [...principal.roles],
    connectionId: event.requestContext.connectionId,
  });
  return { statusCode: 200 };
});
