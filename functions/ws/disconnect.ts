import { deleteConnection, findConnection } from '#domain/realtime/connections';
import { wsHandler } from '#shared/ws';

export const handler = wsHandler('$disconnect', async (event) => {
  const connection = await findConnection(event.requestContext.connectionId);
  if (connection) await deleteConnection(connection);
  return { statusCode: 200 };
});
