import { listWatchlist } from '#domain/realtime/watchlist';
import { httpHandler, ok } from '#edge/http';
import { requireSelfOrAdmin } from '#shared/auth';
import { userParams } from './schemas';

export const handler = httpHandler('ListWatchlist', { params: userParams }, async ({ params, caller }) => {
  requireSelfOrAdmin(caller, params.userId);
  return ok({ targets: await listWatchlist(caller.projectId, params.userId) });
});
