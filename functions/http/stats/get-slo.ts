import { slo } from '#domain/stats/figures';
import { httpHandler, ok } from '#edge/http';
import { DEFAULT_MINUTES, windowQuery } from './schemas';

export const handler = httpHandler('GetSloStats', { query: windowQuery }, async ({ caller, query }) =>
  ok(await slo(caller.projectId, query.minutes ?? DEFAULT_MINUTES)),
);
