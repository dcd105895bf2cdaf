import { findPusherAppByKey } from '#domain/pusher/apps';
import { consumeRateLimit } from '#domain/rate-limit/rate-limit';
import { dropConnection, registerConnection } from '#domain/realtime/connections';
import type { PusherWelcomeJob } from '#domain/realtime/pusher-sockets';
import type { WelcomeJob } from '#domain/realtime/welcome';
import { accessRoom } from '#domain/rooms/rooms';
import { headerValue } from '#edge/headers';
import { parsePart } from '#edge/middlewares/validation';
import { wsHandler } from '#edge/ws';
import { authenticateToken } from '#shared/auth';
import { config } from '#shared/config';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '#shared/errors';
import { idSchema } from '#shared/ids';
import { PUSHER_MIN_PROTOCOL_VERSION, PUSHER_PROTOCOL_VERSION } from '#shared/pusher-protocol';
import { sendRealtimeJobs } from '#shared/queue';
import * as z from '#shared/schema';

/** The room channel (`roomId`) or the user channel (`userId`); the local gateway maps the paths to these. */
const connectQuery = z.object({
  token: z.optional(z.string()),
  roomId: z.optional(idSchema),
  userId: z.optional(idSchema),
  /** `/app/<key>`: a Pusher-protocol socket of the project whose app has that key. */
  pusherKey: z.optional(idSchema),
  /** pusher-js sends the protocol version it speaks. */
  protocol: z.optional(z.string().check(z.regex(/^\d{1,3}$/))),
  cache: z.optional(z.enum(['0', '1', 'true', 'false'])),
  /** Batch frames in coalesced rooms (docs/architecture.md, "Hot rooms: coalesced delivery"). */
  batch: z.optional(z.enum(['0', '1', 'true', 'false'])),
  history: z.optional(z.pipe(z.string().check(z.regex(/^\d{1,3}$/)), z.transform(Number)).check(z.maximum(100))),
});

/**
 * `GET /ws/rooms/<roomId>?token=<JWT>` or `/ws/user/<userId>?token=<JWT>`: the token arrives in
 * the query string because browsers cannot set headers on a WebSocket. Expired or bad tokens get
 * 401, non-members 403, and no upgrade. API Gateway cannot post to the connection until this
 * returns, so the opening frames are queued for the realtime worker.
 */
export const handler = wsHandler('$connect', async (event, context) => {
  const query = parsePart(connectQuery, event.queryStringParameters ?? {}, 'query');
  if (query.pusherKey !== undefined) {
    if (query.roomId !== undefined || query.userId !== undefined) throw new BadRequestError('A Pusher socket names no room or user');
    await openPusherSocket(query.pusherKey, query.protocol, event.requestContext.connectionId, context.sourceIp);
    return { statusCode: 200 };
  }
  if (!query.token) throw new UnauthorizedError('missing_credentials', 'The token query parameter is required');
  const principal = await authenticateToken(query.token, headerValue(event.headers, 'origin'));
  const connectionId = event.requestContext.connectionId;
  const base = { projectId: principal.projectId, userId: principal.userId, roles: [...principal.roles], connectionId };

  if (query.userId !== undefined && query.roomId === undefined) {
    if (query.userId !== principal.userId) throw new ForbiddenError("Only the user's own token may open their user channel");
    const connection = { ...base, channel: 'user' as const };
    const change = await registerConnection(connection);
    await queueWelcome(connectionId, { kind: 'welcome', connection, change, history: 0, cache: false });
    return { statusCode: 200 };
  }

  if (query.roomId === undefined) throw new BadRequestError('A roomId (or a userId for the user channel) is required');
  const { room, membership } = await accessRoom(principal, query.roomId, { join: true });
  if (!membership) throw new ForbiddenError('Only room members may connect', 'not_a_member');
  const publicLimit = config.RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE;
  if (room.type === 'public' && publicLimit) await consumeRateLimit(principal.projectId, 'ws-public', [principal.userId], publicLimit);
  const batch = query.batch === '1' || query.batch === 'true';
  const connection = { ...base, channel: 'room' as const, roomId: query.roomId, ...(batch ? { batch: true as const } : {}) };
  const change = await registerConnection(connection);
  await queueWelcome(connectionId, {
    kind: 'welcome',
    connection,
    change,
    history: query.history ?? config.REALTIME_HISTORY_DEFAULT,
    cache: query.cache === '1' || query.cache === 'true',
  });
  return { statusCode: 200 };
});

/**
 * Queues a stored connection's opening frames. A refused upgrade never gets a `$disconnect`, so
 * when the queue refuses, the connection is forgotten here, or its presence counters would stay
 * counted in.
 */
async function queueWelcome(connectionId: string, job: WelcomeJob | PusherWelcomeJob): Promise<void> {
  try {
    await sendRealtimeJobs([job]);
  } catch (error) {
    await dropConnection(connectionId);
    throw error;
  }
}

/**
 * `/app/<key>?protocol=7`: the socket is stored for the app's project with no user (each
 * subscription proves one) and `pusher:connection_established` is queued. An unknown key or a
 * protocol this endpoint does not speak refuses the upgrade (pusher-js then retries with back-off,
 * where an accepted socket closed with 4001 or 4007 would cost a connection each time).
 */
async function openPusherSocket(key: string, protocol: string | undefined, connectionId: string, sourceIp: string): Promise<void> {
  const version = Number(protocol ?? PUSHER_PROTOCOL_VERSION);
  if (version < PUSHER_MIN_PROTOCOL_VERSION || version > PUSHER_PROTOCOL_VERSION) {
    throw new BadRequestError(
      `This endpoint speaks the Pusher protocol ${PUSHER_MIN_PROTOCOL_VERSION} to ${PUSHER_PROTOCOL_VERSION}`,
      [{ field: 'protocol', message: `must be ${PUSHER_MIN_PROTOCOL_VERSION}-${PUSHER_PROTOCOL_VERSION}` }],
      'unsupported_protocol',
    );
  }
  const app = await findPusherAppByKey(key);
  if (!app) throw new NotFoundError('pusher_app_not_found', 'No Pusher app has this key');
  await consumeRateLimit(app.projectId, 'ws-pusher', [`ip:${sourceIp}`], config.RATE_LIMIT_PUSHER_CONNECTIONS_PER_IP_PER_MINUTE);
  await registerConnection({ projectId: app.projectId, channel: 'pusher', userId: '', roles: [], connectionId });
  await queueWelcome(connectionId, { kind: 'pusher-welcome', connectionId });
}
