import { listPendingSurveys } from '#domain/support/csat';
import { httpHandler, ok } from '#edge/http';
import { pendingCsatQuery } from './schemas';

export const handler = httpHandler('ListPendingCsat', { query: pendingCsatQuery }, async ({ query, user }) =>
  ok(await listPendingSurveys(user, query.roomId)),
);
