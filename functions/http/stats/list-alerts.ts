import { alerts } from '#domain/stats/figures';
import { httpHandler, ok } from '#edge/http';
import { alertsQuery } from './schemas';

export const handler = httpHandler('ListStatsAlerts', { query: alertsQuery }, async ({ caller, query }) =>
  ok(await alerts(caller.projectId, query.limit ?? 50)),
);
