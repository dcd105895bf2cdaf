import { opsSeries } from '#domain/stats/figures';
import { httpHandler, ok } from '#edge/http';
import { DEFAULT_MINUTES, windowQuery } from './schemas';

export const handler = httpHandler('GetOpsStats', { query: windowQuery }, async ({ caller, query }) =>
  ok(await opsSeries(caller.projectId, query.minutes ?? DEFAULT_MINUTES)),
);
