import { dropConnection } from '#domain/realtime/connections';
import { announceDepartures } from '#domain/realtime/presence';
import { forgetSubscriptions } from '#domain/realtime/pusher-sockets';
import { wsHandler } from '#edge/ws';

/** Best effort on AWS: a connection whose `$disconnect` never comes is forgotten on its first 410, or by TTL. */
export const handler = wsHandler('$disconnect', async (event) => {
  const dropped = await dropConnection(event.requestContext.connectionId);
  if (dropped?.connection.channel === 'pusher') await forgetSubscriptions(dropped.connection.connectionId);
  else if (dropped) await announceDepartures([dropped]);
  return { statusCode: 200 };
});
