import { publishUserEvent } from '#domain/realtime/server-events';
import { httpHandler } from '#edge/http';
import * as z from '#shared/schema';
import { eventData, eventName, userParams } from './schemas';

const body = z.strictObject({ name: eventName, data: eventData });

export const handler = httpHandler('PublishUserEvent', { params: userParams, body }, async ({ params, body, caller }) => ({
  status: 202,
  body: await publishUserEvent(caller, params.userId, body),
}));
