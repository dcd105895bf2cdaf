import { addWatchTarget } from '#domain/realtime/watchlist';
import { created, httpHandler, ok } from '#edge/http';
import { requireSelfOrAdmin } from '#shared/auth';
import { userParams, watchTarget } from './schemas';

export const handler = httpHandler('AddWatchlistTarget', { params: userParams, body: watchTarget }, async ({ params, body, caller }) => {
  requireSelfOrAdmin(caller, params.userId);
  const result = await addWatchTarget(caller, params.userId, body);
  return result.created ? created(result.target) : ok(result.target);
});
