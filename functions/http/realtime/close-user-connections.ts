import { closeUserConnections } from '#domain/realtime/server-events';
import { httpHandler, ok } from '#edge/http';
import { userParams } from './schemas';

export const handler = httpHandler('CloseUserConnections', { params: userParams }, async ({ params, caller }) =>
  ok(await closeUserConnections(caller, params.userId)),
);
