import { createHash, createHmac } from 'node:crypto';
import { publishServerEvent } from '#domain/realtime/server-events';
import { constantTimeEqual, type ServicePrincipal } from '#shared/auth';
import { BadRequestError, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '#shared/errors';
import { connectionIdOf } from '#shared/pusher-protocol';
import { signedTimestampVerdict } from '#shared/signed-timestamp';
import { findPusherAppById, type PusherApp } from './apps';
import { requireSocketId, roomChannelOf } from './channel-auth';

/**
 * Pusher's server HTTP API, the part that triggers events (`POST /apps/<appId>/events` and
 * `/batch_events`), as the Pusher server libraries call it: each request signed with the app's
 * secret in the query string, each event published as `POST /events` publishes one, by the app's
 * project.
 */

/** How far a request's `auth_timestamp` may be from now, either way (Pusher's window). */
export const TRIGGER_TIMESTAMP_WINDOW_SECONDS = 600;
/** Pusher's limits: channels per event, events per batch, an event's name and its data. */
export const MAX_TRIGGER_CHANNELS = 100;
export const MAX_BATCH_EVENTS = 10;
export const MAX_PUSHER_EVENT_NAME = 200;
export const MAX_PUSHER_EVENT_DATA_BYTES = 10 * 1024;

const refused = (message: string) => new UnauthorizedError('invalid_pusher_signature', message);

/**
 * The app a trigger request is signed for, or 401 `invalid_pusher_signature` (404
 * `pusher_app_not_found` for an app id no project holds). The string signed is
 * `POST\n<path>\n<every query parameter but auth_signature, sorted by name, as name=value joined by &>`,
 * and `body_md5` must be the MD5 of the body as sent.
 */
export async function verifiedTriggerApp(input: {
  appId: string;
  method: string;
  path: string;
  query: Readonly<Record<string, string | undefined>>;
  rawBody: Buffer;
  now?: number;
}): Promise<PusherApp> {
  const app = await findPusherAppById(input.appId);
  if (!app) throw new NotFoundError('pusher_app_not_found', 'No Pusher app has this id');
  const { auth_key, auth_timestamp, auth_version, body_md5, auth_signature } = input.query;
  if (!auth_key || !auth_timestamp || !auth_signature || auth_version !== '1.0') {
    throw refused('auth_key, auth_timestamp, auth_version=1.0 and auth_signature are required');
  }
  if (!constantTimeEqual(auth_key, app.key)) throw refused('auth_key is not the key of this app');
  if (signedTimestampVerdict(auth_timestamp, TRIGGER_TIMESTAMP_WINDOW_SECONDS, (input.now ?? Date.now()) / 1000) !== 'fresh') {
    throw refused(`auth_timestamp must be within ${TRIGGER_TIMESTAMP_WINDOW_SECONDS} s of the server's clock`);
  }
  if (body_md5 === undefined || !constantTimeEqual(body_md5, createHash('md5').update(input.rawBody).digest('hex'))) {
    throw refused('body_md5 is not the MD5 of the body');
  }
  const signed = Object.entries(input.query)
    .filter(([name, value]) => name !== 'auth_signature' && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const expected = createHmac('sha256', app.secret).update(`${input.method.toUpperCase()}\n${input.path}\n${signed}`).digest('hex');
  if (!constantTimeEqual(auth_signature, expected)) throw refused('auth_signature does not verify');
  return app;
}

/** One event as the Pusher API takes it: `data` a JSON string, sent to one channel or several. */
export interface PusherEvent {
  readonly name: string;
  readonly data: string;
  readonly channels?: readonly string[];
  readonly channel?: string;
  readonly socket_id?: string;
}

/** `data` parsed: the service's events carry a JSON object, so anything else is refused rather than wrapped. */
function eventData(data: string, field: string): Record<string, unknown> {
  if (Buffer.byteLength(data) > MAX_PUSHER_EVENT_DATA_BYTES) {
    throw new PayloadTooLargeError(`${field} exceeds ${MAX_PUSHER_EVENT_DATA_BYTES} bytes (Pusher's limit per event)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BadRequestError(
      `${field} must be a JSON object in a string (as JSON.stringify of an object gives)`,
      [{ field, message: 'is not a JSON object' }],
      'invalid_event_data',
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * Publishes each event to the rooms of its channels, by the app's project, except the socket
 * named by `socket_id`. Every event is checked before the first is sent, so a bad batch sends
 * nothing. Rooms that do not exist are skipped, as Pusher answers for channels nobody is on.
 */
export async function triggerEvents(app: PusherApp, events: readonly PusherEvent[], field: (index: number) => string): Promise<void> {
  const principal: ServicePrincipal = { kind: 'service', projectId: app.projectId };
  const checked = events.map((event, index) => {
    const named = event.channels?.map((name, at) => ({ name, field: `${field(index)}.channels.${at}` })) ?? [];
    if (event.channel !== undefined) named.push({ name: event.channel, field: `${field(index)}.channel` });
    const roomIds = named.map((channel) => roomChannelOf(channel.name, channel.field).roomId);
    if (event.socket_id !== undefined) requireSocketId(event.socket_id, `${field(index)}.socket_id`);
    return {
      roomIds,
      name: event.name,
      data: eventData(event.data, `${field(index)}.data`),
      // A socket id that is not one of ours excludes nobody; one that is excludes every
      // subscription of its socket (`broadcastToRoom`).
      excludeSocketId: event.socket_id === undefined ? undefined : connectionIdOf(event.socket_id),
    };
  });
  for (const event of checked) await publishServerEvent(principal, event);
}
