import { authorizeChannel } from '#domain/pusher/channel-auth';
import { httpHandler, ok } from '#edge/http';
import { channelAuthBody } from './schemas';

/** `{ auth, channel_data }`, what pusher-js's default authorizer expects back. */
export const handler = httpHandler('AuthorizeChannel', { body: channelAuthBody, form: true }, async ({ body, user }) =>
  ok(await authorizeChannel(user, { socketId: body.socket_id, channelName: body.channel_name, presenceInfo: body.presenceInfo })),
);
