import { evaluateAlerts } from '#domain/stats/figures';
import { scheduleHandler } from '#edge/schedule';

/** Once a minute: the rules of every project with an open alert, so one resolves once its window is clean, traffic or not. */
export const handler = scheduleHandler('StatsAlerts', async () => {
  await evaluateAlerts([], { withOpen: true });
  return {};
});
