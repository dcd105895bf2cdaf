import { removeWatchTarget } from '#domain/realtime/watchlist';
import { httpHandler, noContent } from '#edge/http';
import { requireSelfOrAdmin } from '#shared/auth';
import { userParams, watchTarget } from './schemas';

export const handler = httpHandler('RemoveWatchlistTarget', { params: userParams, body: watchTarget }, async ({ params, body, caller }) => {
  requireSelfOrAdmin(caller, params.userId);
  await removeWatchTarget(caller.projectId, params.userId, body);
  return noContent();
});
